//! TagScorer and FrequencyScorer (`scorers/tag.md`, `scorers/frequency.md`).

use std::collections::HashMap;

use crate::items::Items;

/// Sum of the weights of the item's tags (case-sensitive, each occurrence
/// counted) over the total configured weight, at most 1.0.
pub fn tag(items: &Items, all: &[u32], weights: &[(String, f64)], out: &mut [f64]) {
    let total: f64 = weights.iter().map(|w| w.1).sum();
    let map: HashMap<&str, f64> = weights.iter().map(|(t, w)| (t.as_str(), *w)).collect();
    for (o, &i) in out.iter_mut().zip(all) {
        let tags = items.tags(i);
        *o = if total == 0.0 || tags.is_empty() {
            0.0
        } else {
            let matched: f64 = tags.iter().filter_map(|t| map.get(&**t)).sum();
            (matched / total).min(1.0)
        };
    }
}

/// The share of the other items (of `all.len() - 1`) that share at least
/// one tag with the item, tags compared with ASCII case folding. Items with
/// the same set of tags share one count.
pub fn frequency(items: &Items, all: &[u32], out: &mut [f64]) {
    out.fill(0.0);
    if all.len() <= 1 {
        return;
    }
    // Folded tag -> id; per position, its distinct tag ids; per id, positions.
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut holders: Vec<Vec<u32>> = Vec::new();
    let mut sets: Vec<Vec<u32>> = Vec::with_capacity(all.len());
    for (p, &i) in all.iter().enumerate() {
        let mut set: Vec<u32> = items
            .tags(i)
            .iter()
            .map(|t| {
                let next = ids.len() as u32;
                *ids.entry(t.to_ascii_lowercase()).or_insert(next)
            })
            .collect();
        set.sort_unstable();
        set.dedup();
        for &t in &set {
            if t as usize == holders.len() {
                holders.push(Vec::new());
            }
            holders[t as usize].push(p as u32);
        }
        sets.push(set);
    }
    let mut seen = vec![u32::MAX; all.len()];
    let mut by_set: HashMap<&[u32], usize> = HashMap::new();
    let peers = (all.len() - 1) as f64;
    for (p, set) in sets.iter().enumerate() {
        if set.is_empty() {
            continue;
        }
        let union = *by_set.entry(set.as_slice()).or_insert_with(|| {
            let mut n = 0;
            for &t in set {
                for &q in &holders[t as usize] {
                    if seen[q as usize] != p as u32 {
                        seen[q as usize] = p as u32;
                        n += 1;
                    }
                }
            }
            n
        });
        // The union holds the item itself.
        out[p] = (union - 1) as f64 / peers;
    }
}
