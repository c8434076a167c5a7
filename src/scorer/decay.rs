//! DecayScorer (`scorers/decay.md`): a score from the age of the item's
//! timestamp at an explicit reference time, through one of three curves.

use crate::error::{invalid, Result};

/// The decay curve; durations in seconds.
#[derive(Debug, Clone, PartialEq)]
pub enum Curve {
    /// `2^(-age / half_life)`.
    Exponential { half_life_secs: f64 },
    /// The score of the first window whose max age is above the age; the
    /// last window's past all of them.
    Step { windows: Vec<(f64, f64)> },
    /// 1.0 for an age below `max_age`, 0.0 from it on.
    Window { max_age_secs: f64 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Decay {
    pub curve: Curve,
    /// "Now", in UTC milliseconds since the epoch.
    pub reference_unix_millis: i64,
    pub null_timestamp_score: f64,
}

fn positive(what: &str, secs: f64) -> Result<()> {
    if !secs.is_finite() || secs <= 0.0 {
        return invalid!("{what} is {secs} seconds; it must be finite and > 0");
    }
    Ok(())
}

impl Decay {
    pub fn new(
        curve: Curve,
        reference_unix_millis: i64,
        null_timestamp_score: f64,
    ) -> Result<Decay> {
        match &curve {
            Curve::Exponential { half_life_secs } => positive("half_life", *half_life_secs)?,
            Curve::Window { max_age_secs } => positive("max_age", *max_age_secs)?,
            Curve::Step { windows } => {
                if windows.is_empty() {
                    return invalid!("windows is empty; a step curve needs at least one window");
                }
                for (k, &(max_age, score)) in windows.iter().enumerate() {
                    positive(&format!("windows[{k}].max_age"), max_age)?;
                    if !(0.0..=1.0).contains(&score) {
                        return invalid!("windows[{k}].score is {score}; it must be in [0, 1]");
                    }
                }
            }
        }
        if !(0.0..=1.0).contains(&null_timestamp_score) {
            return invalid!(
                "null_timestamp_score is {null_timestamp_score}; it must be in [0, 1]"
            );
        }
        Ok(Decay {
            curve,
            reference_unix_millis,
            null_timestamp_score,
        })
    }

    /// The score of an item with `timestamp`.
    pub fn score(&self, timestamp: Option<i64>) -> f64 {
        let Some(t) = timestamp else {
            return self.null_timestamp_score;
        };
        // Future-dated items have age zero; i128 so no extreme overflows.
        let age_ms = (self.reference_unix_millis as i128 - t as i128).max(0);
        let age = age_ms as f64 / 1000.0;
        match &self.curve {
            Curve::Exponential { half_life_secs } => 2f64.powf(-age / half_life_secs),
            Curve::Window { max_age_secs } => {
                if age < *max_age_secs {
                    1.0
                } else {
                    0.0
                }
            }
            Curve::Step { windows } => {
                windows
                    .iter()
                    .find(|w| w.0 > age)
                    .unwrap_or(windows.last().expect("validated: not empty"))
                    .1
            }
        }
    }
}
