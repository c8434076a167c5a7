//! Stage 3, Deduplicate (`spec/cupel/pipeline/deduplicate.md`): among items
//! with byte-identical content, the highest score survives (the earliest on
//! a tie); the survivors keep their order. An item without content is
//! unique. Each content is hashed once. A grouped item takes no part: it
//! neither removes nor is removed (removing one member would split its
//! group; docs/groups.md).

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use super::report::{Log, Reason};
use crate::items::Items;

/// The survivors of `scored` (item indices, in order), `scores` by item
/// index. Every other item is logged as Deduplicated against its survivor,
/// in `scored` order (the spec's collecting pass).
pub fn deduplicate(items: &Items, scored: &[u32], scores: &[f64], log: &mut Log) -> Vec<u32> {
    // content -> position in `scored` of the best item (highest score, the
    // earliest on a tie)
    let mut best: HashMap<&str, usize> = HashMap::with_capacity(scored.len());
    let content = |i: u32| items.content(i).filter(|_| items.group(i) == 0);
    for (p, &i) in scored.iter().enumerate() {
        let Some(content) = content(i) else {
            continue;
        };
        match best.entry(content) {
            Entry::Vacant(e) => {
                e.insert(p);
            }
            Entry::Occupied(mut e) => {
                if scores[i as usize] > scores[scored[*e.get()] as usize] {
                    e.insert(p);
                }
            }
        }
    }
    let mut unique = Vec::with_capacity(best.len());
    for (p, &i) in scored.iter().enumerate() {
        match content(i).map(|c| best[c]) {
            Some(winner) if winner != p => {
                let kept = scored[winner];
                let (score, tokens) = (scores[i as usize], items.view().tokens(i));
                log.exclude(i, score, Reason::Deduplicated, tokens, 0, Some(kept));
            }
            _ => unique.push(i),
        }
    }
    unique
}
