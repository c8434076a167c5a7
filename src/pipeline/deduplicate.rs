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

use std::collections::HashMap;

use super::report::{Log, Reason};
use crate::items::Items;

/// A run of items sharing a length up to this size is compared pairwise
/// (at most 120 comparisons, most ending at the first 8 bytes); a longer
/// one goes through a hash map.
const PAIRWISE: usize = 16;

/// Equal texts of equal length: the first 8 bytes first (texts that
/// differ mostly differ there), then all of them.
fn same(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            let (a, b) = (a.as_bytes(), b.as_bytes());
            a.first_chunk::<8>() == b.first_chunk::<8>() && a == b
        }
        _ => false,
    }
}

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
    // The best of a class: winner of the fold over its members.
    let pick = |members: &mut dyn Iterator<Item = u32>| -> Option<u32> {
        let first = members.next()?;
        Some(members.fold(
            first,
            |w, p| if better(p as usize, w as usize) { p } else { w },
        ))
    };
    let mut start = 0;
    let mut index: HashMap<&str, u32> = HashMap::new();
    let mut classes: Vec<u32> = Vec::new();
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
        // rep[k]: the first member (in position order) with k's content.
        classes.clear();
        if run.len() <= PAIRWISE {
            let mut rep = [0usize; PAIRWISE];
            for k in 0..run.len() {
                rep[k] = k;
                let ck = content(run[k].1 as usize);
                if let Some(j) =
                    (0..k).find(|&j| rep[j] == j && same(content(run[j].1 as usize), ck))
                {
                    rep[k] = j;
                }
            }
            for r in 0..run.len() {
                if rep[r] != r {
                    continue;
                }
                let members = (r..run.len()).filter(|&k| rep[k] == r).map(|k| run[k].1);
                let best = pick(&mut members.clone()).unwrap_or(run[r].1);
                for p in members {
                    winner[p as usize] = best;
                }
            }
        } else {
            // class of each member, by a map of the run's contents.
            index.clear();
            for &(_, p) in run {
                let c = content(p as usize).unwrap_or_default();
                let next = index.len() as u32;
                classes.push(*index.entry(c).or_insert(next));
            }
            if index.len() == run.len() {
                continue;
            }
            // The best member of each class, then every member's winner.
            let mut best: Vec<u32> = vec![u32::MAX; index.len()];
            for (&(_, p), &k) in run.iter().zip(&classes) {
                let b = &mut best[k as usize];
                if *b == u32::MAX || better(p as usize, *b as usize) {
                    *b = p;
                }
            }
            for (&(_, p), &k) in run.iter().zip(&classes) {
                winner[p as usize] = best[k as usize];
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::NewItem;
    use crate::testing::Rng;

    /// The spec's DEDUPLICATE as written: a map from content to the best
    /// (highest score, earliest on a tie), then the survivors in order.
    fn spec(items: &Items, scored: &[u32], scores: &[f64]) -> Vec<u32> {
        let mut best: HashMap<&str, u32> = HashMap::new();
        for &i in scored {
            let Some(c) = items.content(i).filter(|_| items.group(i) == 0) else {
                continue;
            };
            let b = best.entry(c).or_insert(i);
            if scores[i as usize] > scores[*b as usize] {
                *b = i;
            }
        }
        scored
            .iter()
            .copied()
            .filter(
                |&i| match items.content(i).filter(|_| items.group(i) == 0) {
                    Some(c) => best[c] == i,
                    None => true,
                },
            )
            .collect()
    }

    #[test]
    fn agrees_with_the_spec_on_runs_of_every_size() {
        let mut rng = Rng(3);
        for case in 0..400 {
            let n = 1 + rng.below(80) as usize;
            // Few lengths (long runs, the hashed path) or many (pairwise).
            let lengths = [1, 2, 3, 12, 40][case % 5];
            let mut items = Items::new();
            for i in 0..n {
                let score = rng.below(4) as f64 / 4.0;
                items
                    .push(NewItem {
                        tokens: 1,
                        score,
                        kind: None,
                    })
                    .unwrap();
                if rng.chance(85) {
                    let len = 1 + rng.below(lengths) as usize * 9;
                    // Texts that differ late, early, or not at all.
                    let mut t: Vec<u8> = vec![b'a'; len];
                    let at = [0, len / 2, len - 1][rng.below(3) as usize];
                    t[at] = b'a' + rng.below(3) as u8;
                    items
                        .set_content(i, std::str::from_utf8(&t).unwrap())
                        .unwrap();
                }
                if rng.chance(10) {
                    items.set_group(i, 1 + rng.below(3)).unwrap();
                }
            }
            let scores: Vec<f64> = (0..n as u32).map(|i| items.view().score(i)).collect();
            let mut scored: Vec<u32> = (0..n as u32).collect();
            if case % 2 == 1 {
                scored.reverse();
            }
            let mut log = Log::new(true);
            let got = deduplicate(&items, &scored, &scores, &mut log);
            assert_eq!(got, spec(&items, &scored, &scores), "case {case}");
        }
    }
}
