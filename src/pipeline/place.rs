//! Stage 6, Place (`spec/cupel/pipeline/place.md`): pinned items (score
//! 1.0) then the sliced items in the slicer's output order are merged (the
//! spec's `merged[length(pinned) + i] <- slicedScored[i]`); a total over
//! `target_tokens` is handled by the overflow strategy; the placer orders
//! the result (ties keep merged order).

use super::report::{Log, Reason};
use super::slice::Outcome;
use crate::error::{Error, Result};
use crate::group::Groups;
use crate::items::Items;
use crate::placer::Placer;

/// What to do when pinned plus sliced items exceed the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Fail the run (the default).
    Throw,
    /// Keep pinned items, then merged items in order while they fit.
    Truncate,
    /// Keep everything; the report shows the overflow.
    Proceed,
}

/// The score an item has in the merged list: 1.0 for a pinned one.
pub const PINNED_SCORE: f64 = 1.0;

#[allow(clippy::too_many_arguments)]
pub fn place(
    items: &Items,
    pinned: &[u32],
    outcome: &Outcome,
    scores: &[f64],
    target_tokens: i64,
    overflow: Overflow,
    placer: Option<&Placer>,
    groups: Option<&Groups>,
    log: &mut Log,
) -> Result<Vec<u32>> {
    let view = items.view();
    let sliced = &outcome.selected;
    // Step 1: merge, pinned first. An item included as a variant or cut
    // has the share of its score it keeps (`crate::choice`).
    let score_of = |i: u32| match outcome.shrunk.get(&i) {
        None => scores[i as usize],
        s => scores[i as usize] * crate::choice::fill::share(items, view, i, s),
    };
    let mut merged: Vec<(u32, f64)> = Vec::with_capacity(pinned.len() + sliced.len());
    merged.extend(pinned.iter().map(|&i| (i, PINNED_SCORE)));
    merged.extend(sliced.iter().map(|&i| (i, score_of(i))));
    // A group is one entry from here on: its first member in push order
    // (which is where the group first appears in `merged`: pinned items
    // and each sliced group come in push order) stands for it, with the
    // group's tokens; it is expanded after placing.
    let pinned_len = match groups {
        None => pinned.len(),
        Some(g) => {
            let first = |&(i, _): &(u32, f64)| g.unit(&i)[0] == i;
            let n = merged[..pinned.len()].iter().filter(|e| first(e)).count();
            merged.retain(first);
            n
        }
    };
    // The tokens an entry adds (a shrunk item's chosen count), a group's
    // summed over its members.
    let tokens = |i: u32| match groups {
        None => outcome.tokens_of(view, i),
        Some(g) => g.unit(&i).iter().fold(0i64, |acc, &m| {
            acc.saturating_add(outcome.tokens_of(view, m))
        }),
    };
    // Step 2: overflow against the original target.
    let total = merged
        .iter()
        .fold(0i64, |acc, &(i, _)| acc.saturating_add(tokens(i)));
    if total > target_tokens {
        match overflow {
            Overflow::Throw => {
                return Err(Error::Overflow(format!(
                    "the selected items need {total} tokens, over target_tokens {target_tokens} \
                     (overflow strategy Throw; Truncate or Proceed accept it)"
                )))
            }
            Overflow::Proceed => log.overflow(total - target_tokens),
            Overflow::Truncate => {
                let first_pinned = pinned.first().copied();
                let mut kept = Vec::with_capacity(merged.len());
                // Tokens kept so far: all, and those of unpinned items.
                let (mut used, mut used_unpinned) = (0i64, 0i64);
                for (p, &(i, score)) in merged.iter().enumerate() {
                    let t = tokens(i);
                    if p < pinned_len {
                        kept.push((i, score));
                        used = used.saturating_add(t);
                    } else if used.saturating_add(t) <= target_tokens {
                        kept.push((i, score));
                        used = used.saturating_add(t);
                        used_unpinned = used_unpinned.saturating_add(t);
                    } else {
                        let available = target_tokens.saturating_sub(used).max(0);
                        // It would fit but for the pinned items.
                        let displaced = used_unpinned.saturating_add(t) <= target_tokens;
                        for &m in groups.map_or(std::slice::from_ref(&i), |g| g.unit(&i)) {
                            let (score, t) = (scores[m as usize], view.tokens(m));
                            match first_pinned {
                                Some(by) if displaced => {
                                    log.exclude(m, score, Reason::PinnedOverride, t, 0, Some(by))
                                }
                                _ => log.exclude(
                                    m,
                                    score,
                                    Reason::BudgetExceeded,
                                    t,
                                    available,
                                    None,
                                ),
                            }
                        }
                    }
                }
                merged = kept;
            }
        }
    }
    // Step 3: order.
    let placed = match placer {
        Some(p) => p.place(items, &merged),
        None => merged.iter().map(|&(i, _)| i).collect(),
    };
    let (merged, placed) = match groups {
        None => (merged, placed),
        Some(g) => {
            // Each group's members, in push order, where the group stands.
            // Pinned as Classify decided: the item's flag or its group's.
            let score = |m: u32| match items.pinned(m) || g.pinned(m) {
                true => PINNED_SCORE,
                false => score_of(m),
            };
            let merged = merged
                .iter()
                .flat_map(|(i, _)| g.unit(i).iter().copied())
                .map(|m| (m, score(m)))
                .collect();
            let placed = placed.iter().flat_map(|i| g.unit(i).iter().copied());
            (merged, placed.collect())
        }
    };
    log.placed(&merged);
    log.stage("Place", placed.len());
    Ok(placed)
}
