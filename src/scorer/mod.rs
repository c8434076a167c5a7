//! The scorers (`spec/cupel/scorers/`), and the Score stage
//! (`pipeline/score.md`): each scorer scores a list of items in one pass
//! (relative scorers rank the whole list at once), writing one score per
//! position. Composites own copies of their children, so no scorer graph
//! can contain a cycle (the spec's DETECT-CYCLES has nothing to find).

mod decay;
mod metadata;
mod rank;
mod tags;

pub use decay::{Curve, Decay};

use crate::error::{invalid, Result};
use crate::items::Items;
use crate::kind::fold;

/// A configured scorer.
#[derive(Debug, Clone, PartialEq)]
pub enum Scorer {
    /// The score pushed with each item (the host's own relevance).
    Given,
    /// Rank of the timestamp among the timestamped items.
    Recency,
    /// Rank of the priority among the prioritised items.
    Priority,
    /// A weight per kind (ASCII case-insensitive); 0 for other kinds.
    Kind(Vec<(String, f64)>),
    /// Matched tag weights over the total weight (case-sensitive tags).
    Tag(Vec<(String, f64)>),
    /// Share of the other items sharing a tag (case-insensitive).
    Frequency,
    /// The futureRelevanceHint, clamped to [0, 1].
    Reflexive,
    /// Weighted average of children (weights normalised to sum 1), and the
    /// weights as configured (what a policy file writes back, so that
    /// reading it normalises to the very same weights).
    Composite(Vec<(Scorer, f64)>, Vec<f64>),
    /// Min-max normalisation of the inner scorer over the list.
    Scaled(Box<Scorer>),
    /// `metadata["cupel:trust"]` parsed, clamped; the default otherwise.
    MetadataTrust(f64),
    /// `boost` where `metadata[key] == value`, 1.0 elsewhere.
    MetadataKey {
        key: String,
        value: String,
        boost: f64,
    },
    Decay(Decay),
}

/// The default weights of the KindScorer.
pub const DEFAULT_KIND_WEIGHTS: [(&str, f64); 5] = [
    ("SystemPrompt", 1.0),
    ("Memory", 0.8),
    ("ToolOutput", 0.6),
    ("Document", 0.4),
    ("Message", 0.2),
];

/// Checks one configured weight: finite and >= 0 (`what` names it).
fn check_weight(what: &str, weight: f64) -> Result<()> {
    if !weight.is_finite() || weight < 0.0 {
        return invalid!("{what} is {weight}; weights must be finite and >= 0");
    }
    Ok(())
}

impl Scorer {
    /// KindScorer with `weights` (kind, weight); `None` for the defaults.
    pub fn kind(weights: Option<Vec<(String, f64)>>) -> Result<Scorer> {
        let weights = match weights {
            None => DEFAULT_KIND_WEIGHTS
                .iter()
                .map(|&(k, w)| (k.to_string(), w))
                .collect(),
            Some(w) => w,
        };
        let mut seen = std::collections::HashSet::new();
        for (i, (kind, w)) in weights.iter().enumerate() {
            crate::kind::validate(kind, &format!("weights[{i}].kind"))?;
            check_weight(&format!("weights[{i}].weight (kind {kind:?})"), *w)?;
            if !seen.insert(fold(kind)) {
                return invalid!("weights[{i}]: kind {kind:?} is configured twice");
            }
        }
        Ok(Scorer::Kind(weights))
    }

    /// TagScorer with `weights` (tag, weight); may be empty (every score 0).
    pub fn tag(weights: Vec<(String, f64)>) -> Result<Scorer> {
        let mut seen = std::collections::HashSet::new();
        for (i, (tag, w)) in weights.iter().enumerate() {
            if tag.is_empty() {
                return invalid!("weights[{i}].tag is empty; a tag needs a name");
            }
            check_weight(&format!("weights[{i}].weight (tag {tag:?})"), *w)?;
            if !seen.insert(tag.as_str()) {
                return invalid!("weights[{i}]: tag {tag:?} is configured twice");
            }
        }
        Ok(Scorer::Tag(weights))
    }

    /// CompositeScorer: at least one child, every weight finite and > 0.
    pub fn composite(children: Vec<(Scorer, f64)>) -> Result<Scorer> {
        if children.is_empty() {
            return invalid!("count is 0; a composite scorer needs at least one child");
        }
        for (i, (_, w)) in children.iter().enumerate() {
            if !w.is_finite() || *w <= 0.0 {
                return invalid!("weights[{i}] is {w}; composite weights must be finite and > 0");
            }
        }
        let total: f64 = children.iter().map(|c| c.1).sum();
        if !total.is_finite() {
            return invalid!("weights sum to {total}; their sum must be finite");
        }
        let configured = children.iter().map(|c| c.1).collect();
        Ok(Scorer::Composite(
            children.into_iter().map(|(s, w)| (s, w / total)).collect(),
            configured,
        ))
    }

    pub fn metadata_trust(default_score: f64) -> Result<Scorer> {
        if !(0.0..=1.0).contains(&default_score) {
            return invalid!("default_score is {default_score}; it must be in [0, 1]");
        }
        Ok(Scorer::MetadataTrust(default_score))
    }

    pub fn metadata_key(key: &str, value: &str, boost: f64) -> Result<Scorer> {
        if key.is_empty() {
            return invalid!("key is empty; a metadata key needs a name");
        }
        if !boost.is_finite() || boost <= 0.0 {
            return invalid!("boost is {boost}; it must be finite and > 0");
        }
        Ok(Scorer::MetadataKey {
            key: key.to_string(),
            value: value.to_string(),
            boost,
        })
    }

    /// The Score stage: the score of every item of `scoreable` (item
    /// indices; the scorer's `allItems`), returned by item index (0.0 for
    /// items not in `scoreable`).
    pub fn score_all(&self, items: &Items, scoreable: &[u32]) -> Vec<f64> {
        let mut by_position = vec![0.0; scoreable.len()];
        self.score(items, scoreable, &mut by_position);
        let mut out = vec![0.0; items.len()];
        for (&i, &s) in scoreable.iter().zip(&by_position) {
            out[i as usize] = s;
        }
        out
    }

    /// Scores `all` (item indices) into `out[k]` for `all[k]`.
    pub fn score(&self, items: &Items, all: &[u32], out: &mut [f64]) {
        debug_assert_eq!(all.len(), out.len());
        let each = |out: &mut [f64], f: &dyn Fn(u32) -> f64| {
            for (o, &i) in out.iter_mut().zip(all) {
                *o = f(i);
            }
        };
        match self {
            Scorer::Given => each(out, &|i| items.view().score(i)),
            Scorer::Recency => rank::rank(all, out, |i| items.timestamp(i)),
            Scorer::Priority => rank::rank(all, out, |i| items.priority(i)),
            Scorer::Kind(weights) => {
                // One weight per interned kind of this list.
                let table = items.view().kind_table();
                let mut by_kind = vec![0.0; table.len()];
                for (kind, w) in weights {
                    if let Some(id) = table.lookup(kind) {
                        by_kind[id as usize] = *w;
                    }
                }
                each(out, &|i| by_kind[items.view().kind(i) as usize]);
            }
            Scorer::Tag(weights) => tags::tag(items, all, weights, out),
            Scorer::Frequency => tags::frequency(items, all, out),
            Scorer::Reflexive => each(out, &|i| match items.relevance_hint(i) {
                Some(h) if h.is_finite() => h.clamp(0.0, 1.0),
                _ => 0.0,
            }),
            Scorer::Composite(children, _) => {
                out.fill(0.0);
                let mut child = vec![0.0; all.len()];
                for (scorer, w) in children {
                    scorer.score(items, all, &mut child);
                    for (o, s) in out.iter_mut().zip(&child) {
                        *o += s * w;
                    }
                }
            }
            Scorer::Scaled(inner) => {
                inner.score(items, all, out);
                let (min, max) = out
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &s| {
                        (lo.min(s), hi.max(s))
                    });
                for o in out.iter_mut() {
                    *o = if max == min {
                        0.5
                    } else {
                        (*o - min) / (max - min)
                    };
                }
            }
            Scorer::MetadataTrust(default) => each(out, &|i| {
                metadata::trust(items.metadata_value(i, "cupel:trust"), *default)
            }),
            Scorer::MetadataKey { key, value, boost } => {
                each(out, &|i| match items.metadata_value(i, key) {
                    Some(v) if v == value => *boost,
                    _ => 1.0,
                })
            }
            Scorer::Decay(d) => each(out, &|i| d.score(items.timestamp(i))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::NewItem;
    use crate::testing::Rng;

    /// RECENCY-SCORE / PRIORITY-SCORE as the spec writes them.
    fn spec_rank(keys: &[Option<i64>], k: usize) -> f64 {
        let Some(mine) = keys[k] else { return 0.0 };
        let count = keys.iter().flatten().count();
        let rank = keys.iter().flatten().filter(|&&x| x < mine).count();
        if count <= 1 {
            1.0
        } else {
            rank as f64 / (count - 1) as f64
        }
    }

    /// FREQUENCY-SCORE as the spec writes it.
    fn spec_frequency(tags: &[Vec<String>], k: usize) -> f64 {
        if tags[k].is_empty() || tags.len() <= 1 {
            return 0.0;
        }
        let shares = |a: &[String], b: &[String]| {
            a.iter()
                .any(|x| b.iter().any(|y| x.eq_ignore_ascii_case(y)))
        };
        let matching = (0..tags.len())
            .filter(|&q| q != k && !tags[q].is_empty() && shares(&tags[k], &tags[q]))
            .count();
        matching as f64 / (tags.len() - 1) as f64
    }

    #[test]
    #[allow(clippy::needless_range_loop)] // k indexes the spec's lists and `out` alike
    fn relative_scorers_match_the_spec_pseudocode() {
        const TAGS: [&str; 6] = ["a", "A", "b", "c", "d", "B"];
        let mut rng = Rng(0x5C0_4E5);
        for case in 0..300 {
            let n = rng.below(40) as usize;
            let mut items = Items::new();
            let mut stamps = Vec::new();
            let mut prios = Vec::new();
            let mut tags = Vec::new();
            for i in 0..n {
                let it = NewItem {
                    tokens: 1,
                    score: 0.5,
                    kind: None,
                };
                items.push(it).unwrap();
                let ts = rng.chance(70).then(|| rng.below(10) as i64 - 5);
                let pr = rng.chance(60).then(|| rng.below(6) as i64);
                let tg: Vec<String> = (0..rng.below(4))
                    .map(|_| TAGS[rng.below(6) as usize].to_string())
                    .collect();
                if let Some(t) = ts {
                    items.set_timestamp(i, t).unwrap();
                }
                if let Some(p) = pr {
                    items.set_priority(i, p).unwrap();
                }
                for t in &tg {
                    items.add_tag(i, t).unwrap();
                }
                stamps.push(ts);
                prios.push(pr);
                tags.push(tg);
            }
            let all: Vec<u32> = (0..n as u32).collect();
            let mut out = vec![0.0; n];
            Scorer::Recency.score(&items, &all, &mut out);
            for k in 0..n {
                assert_eq!(out[k], spec_rank(&stamps, k), "case {case} recency {k}");
            }
            Scorer::Priority.score(&items, &all, &mut out);
            for k in 0..n {
                assert_eq!(out[k], spec_rank(&prios, k), "case {case} priority {k}");
            }
            Scorer::Frequency.score(&items, &all, &mut out);
            for k in 0..n {
                assert_eq!(
                    out[k],
                    spec_frequency(&tags, k),
                    "case {case} frequency {k}"
                );
            }
            // SCALED-SCORE over Priority: min-max of the inner scores.
            Scorer::Scaled(Box::new(Scorer::Priority)).score(&items, &all, &mut out);
            let inner: Vec<f64> = (0..n).map(|k| spec_rank(&prios, k)).collect();
            let (lo, hi) = inner
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                    (a.min(x), b.max(x))
                });
            for k in 0..n {
                let want = if hi == lo {
                    0.5
                } else {
                    (inner[k] - lo) / (hi - lo)
                };
                assert_eq!(out[k], want, "case {case} scaled {k}");
            }
        }
    }
}
