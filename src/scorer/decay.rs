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

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR_MS: i64 = 3_600_000;
    const NOW: i64 = 100 * HOUR_MS;

    #[test]
    fn a_step_boundary_belongs_to_the_next_window() {
        let hour = 3600.0;
        let windows = vec![(hour, 0.9), (24.0 * hour, 0.5), (72.0 * hour, 0.1)];
        let d = Decay::new(Curve::Step { windows }, NOW, 0.3).unwrap();
        let at = |age_ms: i64| d.score(Some(NOW - age_ms));
        assert_eq!(at(0), 0.9);
        assert_eq!(at(HOUR_MS - 1), 0.9);
        assert_eq!(at(HOUR_MS), 0.5); // 1h > 1h is false: the next window
        assert_eq!(at(6 * HOUR_MS), 0.5);
        assert_eq!(at(24 * HOUR_MS), 0.1);
        assert_eq!(at(72 * HOUR_MS), 0.1); // past every boundary: the last score
        assert_eq!(at(-5 * HOUR_MS), 0.9); // future-dated: age zero
        assert_eq!(d.score(None), 0.3);
    }

    #[test]
    fn a_window_ends_at_its_max_age() {
        let d = Decay::new(
            Curve::Window {
                max_age_secs: 7200.0,
            },
            NOW,
            0.3,
        )
        .unwrap();
        assert_eq!(d.score(Some(NOW - 2 * HOUR_MS + 1)), 1.0);
        assert_eq!(d.score(Some(NOW - 2 * HOUR_MS)), 0.0);
    }
}
