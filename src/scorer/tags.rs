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

/// A tag compared and hashed with ASCII case folding, without a folded copy.
#[derive(Clone, Copy)]
struct Folded<'a>(&'a str);

impl PartialEq for Folded<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_ignore_ascii_case(other.0)
    }
}

impl Eq for Folded<'_> {}

impl std::hash::Hash for Folded<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        for b in self.0.bytes() {
            h.write_u8(b.to_ascii_lowercase());
        }
        h.write_u8(0xFF);
    }
}

/// The share of the other items (of `all.len() - 1`) that share at least
/// one tag with the item, tags compared with ASCII case folding. Items with
/// the same set of tags share one count. No allocation per item: tag ids
/// go to one flat list, each item's distinct ids a range of it.
pub fn frequency(items: &Items, all: &[u32], out: &mut [f64]) {
    out.fill(0.0);
    if all.len() <= 1 {
        return;
    }
    let mut ids: HashMap<Folded<'_>, u32> = HashMap::new();
    // Per position, its distinct tag ids: flat[starts[p]..starts[p + 1]].
    let mut flat: Vec<u32> = Vec::new();
    let mut starts: Vec<usize> = Vec::with_capacity(all.len() + 1);
    for &i in all {
        let start = flat.len();
        starts.push(start);
        for t in items.tags(i) {
            let next = ids.len() as u32;
            flat.push(*ids.entry(Folded(t)).or_insert(next));
        }
        flat[start..].sort_unstable();
        let mut unique = start;
        for k in start..flat.len() {
            if k == start || flat[k] != flat[unique - 1] {
                flat[unique] = flat[k];
                unique += 1;
            }
        }
        flat.truncate(unique);
    }
    starts.push(flat.len());
    let set = |p: usize| &flat[starts[p]..starts[p + 1]];
    // Per tag id, the positions holding it (one flat list, counting sort).
    let mut holder_starts = vec![0usize; ids.len() + 1];
    for &t in &flat {
        holder_starts[t as usize + 1] += 1;
    }
    for t in 0..ids.len() {
        holder_starts[t + 1] += holder_starts[t];
    }
    let mut holders = vec![0u32; flat.len()];
    let mut fill = holder_starts.clone();
    for p in 0..all.len() {
        for &t in set(p) {
            holders[fill[t as usize]] = p as u32;
            fill[t as usize] += 1;
        }
    }
    let mut seen = vec![u32::MAX; all.len()];
    let mut by_set: HashMap<&[u32], usize> = HashMap::new();
    let peers = (all.len() - 1) as f64;
    for (p, o) in out.iter_mut().enumerate() {
        let tags = set(p);
        if tags.is_empty() {
            continue;
        }
        let union = *by_set.entry(tags).or_insert_with(|| {
            let mut n = 0;
            for &t in tags {
                for &q in &holders[holder_starts[t as usize]..holder_starts[t as usize + 1]] {
                    if seen[q as usize] != p as u32 {
                        seen[q as usize] = p as u32;
                        n += 1;
                    }
                }
            }
            n
        });
        // The union holds the item itself.
        *o = (union - 1) as f64 / peers;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash_of(tag: &str) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault};
        BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .hash_one(Folded(tag))
    }

    #[test]
    fn folded_tags_hash_as_they_compare() {
        // Equal up to ASCII case: the same hash (the map finds them).
        assert_eq!(hash_of("Urgent"), hash_of("uRGENT"));
        assert!(Folded("Urgent") == Folded("uRGENT"));
        // Different tags: different hashes here (not one bucket for all).
        let tags = ["a", "b", "ab", "ba", "urgent", "", "é", "É"];
        let hashes: std::collections::HashSet<u64> = tags.iter().map(|t| hash_of(t)).collect();
        assert_eq!(hashes.len(), tags.len(), "{tags:?}");
        assert!(Folded("é") != Folded("É"), "only ASCII folds");
    }
}
