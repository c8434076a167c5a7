//! Stage 3, Deduplicate (`spec/cupel/pipeline/deduplicate.md`): among items
//! with byte-identical content, the highest score survives (the earliest on
//! a tie); the survivors keep their order. An item without content is
//! unique. A grouped item takes no part: it neither removes nor is removed
//! (removing one member would split its group; docs/groups.md).
//!
//! Contents of different lengths cannot be equal, so the items are first
//! ordered by content length (one sort of N small keys) and only items
//! sharing a length are compared: a few of them byte by byte (a comparison
//! of unequal texts stops at their first difference), more of them through
//! a hash map keyed by a random-seeded hash. Most contents are never hashed
//! (issue 30: hashing was most of the pipeline's time), and adversarial
//! inputs cannot make the comparisons quadratic.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use super::report::{Log, Reason};
use crate::items::Items;

/// A run of items sharing a length up to this size is compared pairwise
/// (at most 28 comparisons); a longer one goes through a hash map.
const PAIRWISE: usize = 8;

/// The survivors of `scored` (item indices, in order), `scores` by item
/// index. Every other item is logged as Deduplicated against its survivor,
/// in `scored` order (the spec's collecting pass).
pub fn deduplicate(items: &Items, scored: &[u32], scores: &[f64], log: &mut Log) -> Vec<u32> {
    let content = |p: usize| {
        let i = scored[p];
        items.content(i).filter(|_| items.group(i) == 0)
    };
    // (content length, position in `scored`) of every item that takes part.
    let mut by_len: Vec<(usize, u32)> = (0..scored.len())
        .filter_map(|p| content(p).map(|c| (c.len(), p as u32)))
        .collect();
    by_len.sort_unstable();
    // winner[p]: the position of the survivor of p's content.
    let mut winner: Vec<u32> = (0..scored.len() as u32).collect();
    let better = |a: usize, b: usize| {
        // a beats b: a higher score, or the same and earlier.
        let (sa, sb) = (scores[scored[a] as usize], scores[scored[b] as usize]);
        sa > sb || (sa == sb && a < b)
    };
    let mut classes: Vec<Vec<u32>> = Vec::new();
    let mut start = 0;
    while start < by_len.len() {
        let len = by_len[start].0;
        let mut end = start + 1;
        while end < by_len.len() && by_len[end].0 == len {
            end += 1;
        }
        let run = &by_len[start..end];
        start = end;
        if run.len() < 2 {
            continue;
        }
        // Classes of equal content in this run, each in position order.
        classes.clear();
        if run.len() <= PAIRWISE {
            for &(_, p) in run {
                let c = content(p as usize);
                match classes.iter_mut().find(|k| content(k[0] as usize) == c) {
                    Some(k) => k.push(p),
                    None => classes.push(vec![p]),
                }
            }
        } else {
            let mut index: HashMap<&str, usize> = HashMap::with_capacity(run.len());
            for &(_, p) in run {
                let c = content(p as usize).unwrap_or_default();
                match index.entry(c) {
                    Entry::Occupied(e) => classes[*e.get()].push(p),
                    Entry::Vacant(e) => {
                        e.insert(classes.len());
                        classes.push(vec![p]);
                    }
                }
            }
        }
        for k in &classes {
            if k.len() < 2 {
                continue;
            }
            let best =
                k.iter().copied().fold(
                    k[0],
                    |w, p| {
                        if better(p as usize, w as usize) {
                            p
                        } else {
                            w
                        }
                    },
                );
            for &p in k {
                winner[p as usize] = best;
            }
        }
    }
    let mut unique = Vec::with_capacity(scored.len());
    for (p, &i) in scored.iter().enumerate() {
        let w = winner[p] as usize;
        if w != p {
            let (score, tokens) = (scores[i as usize], items.view().tokens(i));
            log.exclude(i, score, Reason::Deduplicated, tokens, 0, Some(scored[w]));
        } else {
            unique.push(i);
        }
    }
    unique
}
