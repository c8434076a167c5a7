//! The placers (`spec/cupel/placers/`): the final order of the merged
//! items. Both sort (item, score) pairs given in merged order and break
//! ties by that position.

use crate::items::Items;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placer {
    /// Timestamped items first, oldest first; then the rest in order.
    Chronological,
    /// Highest scores at both edges: ranks 0, 2, 4, ... from the left,
    /// 1, 3, 5, ... from the right.
    UShaped,
}

impl Placer {
    /// The item indices of `merged` (item, score) in placed order.
    pub fn place(self, items: &Items, merged: &[(u32, f64)]) -> Vec<u32> {
        match self {
            Placer::Chronological => {
                // (has no timestamp, timestamp, position): stable and total.
                let mut order: Vec<(bool, i64, usize)> = merged
                    .iter()
                    .enumerate()
                    .map(|(p, &(i, _))| match items.timestamp(i) {
                        Some(t) => (false, t, p),
                        None => (true, 0, p),
                    })
                    .collect();
                order.sort_unstable();
                order.iter().map(|&(_, _, p)| merged[p].0).collect()
            }
            Placer::UShaped => {
                let ranked = crate::sort::by_value_desc(merged.iter().map(|&(_, s)| s));
                let n = merged.len();
                let mut out = vec![0u32; n];
                let (mut left, mut right) = (0, n);
                for (rank, &p) in ranked.iter().enumerate() {
                    if rank % 2 == 0 {
                        out[left] = merged[p as usize].0;
                        left += 1;
                    } else {
                        right -= 1;
                        out[right] = merged[p as usize].0;
                    }
                }
                out
            }
        }
    }
}
