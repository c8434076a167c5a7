//! Stage 3, Deduplicate (`spec/cupel/pipeline/deduplicate.md`): among items
//! with byte-identical content, the highest score survives (the earliest on
//! a tie); the survivors keep their order. An item without content is
//! unique. Each content is hashed once.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use super::report::{Log, Reason};
use crate::items::Items;

/// The survivors of `scored` (item indices, in order), `scores` by item
/// index. Every other item is logged as Deduplicated against its survivor.
pub fn deduplicate(items: &Items, scored: &[u32], scores: &[f64], log: &mut Log) -> Vec<u32> {
    // content -> position in `scored` of the best item so far
    let mut best: HashMap<&str, usize> = HashMap::with_capacity(scored.len());
    let mut keep = vec![true; scored.len()];
    // For each loser, the position of the item that beat it when it lost.
    let mut lost_to: Vec<(usize, usize)> = Vec::new();
    for (p, &i) in scored.iter().enumerate() {
        let Some(content) = items.content(i) else {
            continue;
        };
        match best.entry(content) {
            Entry::Vacant(e) => {
                e.insert(p);
            }
            Entry::Occupied(mut e) => {
                let q = *e.get();
                if scores[i as usize] > scores[scored[q] as usize] {
                    keep[q] = false;
                    lost_to.push((q, p));
                    e.insert(p);
                } else {
                    keep[p] = false;
                    lost_to.push((p, q));
                }
            }
        }
    }
    if log.enabled() {
        // Name the final survivor of each content, not an intermediate one.
        for &(p, _) in &lost_to {
            let i = scored[p];
            let winner = scored[best[items.content(i).unwrap_or_default()]];
            log.exclude(
                i,
                scores[i as usize],
                Reason::Deduplicated,
                items.view().tokens(i),
                0,
                Some(winner),
            );
        }
    }
    scored
        .iter()
        .zip(&keep)
        .filter(|(_, &k)| k)
        .map(|(&i, _)| i)
        .collect()
}
