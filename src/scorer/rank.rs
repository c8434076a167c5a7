//! RecencyScorer and PriorityScorer (`scorers/recency.md`,
//! `scorers/priority.md`): an item's key's rank (how many keys are strictly
//! lower) over the number of keyed items minus one; 1.0 for a lone keyed
//! item, 0.0 for an item without a key. One sort for the whole list.

pub fn rank(all: &[u32], out: &mut [f64], key: impl Fn(u32) -> Option<i64>) {
    let mut keys: Vec<i64> = all.iter().filter_map(|&i| key(i)).collect();
    keys.sort_unstable();
    let count = keys.len();
    for (o, &i) in out.iter_mut().zip(all) {
        *o = match key(i) {
            None => 0.0,
            Some(_) if count <= 1 => 1.0,
            Some(k) => keys.partition_point(|&x| x < k) as f64 / (count - 1) as f64,
        };
    }
}
