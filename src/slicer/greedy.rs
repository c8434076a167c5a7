//! GreedySlice (spec 000): value density, greedy fill.

use crate::items::Items;
use crate::sort::{desc_key, key_position};

/// GREEDY-SLICE over `cands` with `target` tokens. Output in greedy
/// iteration order (density descending, then position in `cands`).
pub fn greedy(items: &Items, cands: &[u32], target: i64) -> Vec<u32> {
    if cands.is_empty() || target <= 0 {
        return Vec::new();
    }
    // Step 1-2: densities as packed (density desc, position asc) keys.
    let mut keys: Vec<u128> = cands
        .iter()
        .enumerate()
        .map(|(pos, &i)| {
            let tokens = items.tokens(i);
            let density = if tokens == 0 {
                f64::MAX
            } else {
                items.score(i) / tokens as f64
            };
            desc_key(density, pos as u32)
        })
        .collect();
    keys.sort_unstable();
    // Step 3: greedy fill, one pass, no backtracking.
    let mut remaining = target;
    let mut selected = Vec::new();
    for key in keys {
        let item = cands[key_position(key) as usize];
        let tokens = items.tokens(item);
        if tokens == 0 {
            selected.push(item);
        } else if tokens <= remaining {
            selected.push(item);
            remaining -= tokens;
        }
    }
    selected
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(spec: &[(i64, f64)]) -> (Items, Vec<u32>) {
        let spec: Vec<_> = spec.iter().map(|&(t, s)| (t, s, "Message")).collect();
        let it = Items::from_spec(&spec);
        let all = (0..spec.len() as u32).collect();
        (it, all)
    }

    // Edge-case table of spec 000.
    #[test]
    fn empty_input_gives_empty() {
        let (it, c) = items(&[]);
        assert!(greedy(&it, &c, 100).is_empty());
    }

    #[test]
    fn non_positive_target_gives_empty() {
        let (it, c) = items(&[(0, 0.5), (10, 0.5)]);
        assert!(greedy(&it, &c, 0).is_empty());
        assert!(greedy(&it, &c, -5).is_empty());
    }

    #[test]
    fn all_zero_token_items_are_selected_in_index_order() {
        let (it, c) = items(&[(0, 0.1), (0, 0.9), (0, 0.5)]);
        assert_eq!(
            greedy(&it, &c, 1),
            vec![0, 1, 2],
            "scores must not reorder zero-token items"
        );
    }

    #[test]
    fn single_item_fits_or_not() {
        let (it, c) = items(&[(50, 0.5)]);
        assert_eq!(greedy(&it, &c, 50), vec![0]);
        assert!(greedy(&it, &c, 49).is_empty());
    }

    #[test]
    fn all_items_exceed_budget_only_zero_token_selected() {
        let (it, c) = items(&[(100, 0.9), (0, 0.1), (200, 0.8)]);
        assert_eq!(greedy(&it, &c, 50), vec![1]);
    }

    #[test]
    fn all_items_fit() {
        let (it, c) = items(&[(10, 0.9), (20, 0.8), (30, 0.1)]);
        let mut got = greedy(&it, &c, 60);
        got.sort();
        assert_eq!(got, vec![0, 1, 2]);
    }

    #[test]
    fn equal_density_ties_by_position() {
        // A (0.5 density, index 0) precedes B (0.5, index 3).
        let (it, c) = items(&[(2, 1.0), (1, 0.1), (1, 0.2), (4, 2.0)]);
        assert_eq!(greedy(&it, &c, 100), vec![0, 3, 2, 1]);
    }

    #[test]
    fn skipped_items_are_not_deferred() {
        // density order: 0 (0.9/90), 1 (0.5/60), 2 (0.1/30) ; budget 100
        let (it, c) = items(&[(90, 0.9), (60, 0.5), (30, 0.1)]);
        // 0 fits (10 left), 1 skipped, 2 skipped: single pass.
        assert_eq!(greedy(&it, &c, 100), vec![0]);
    }

    #[test]
    fn spec_density_example() {
        // conformance greedy-density: budget 300
        let (it, c) = items(&[(400, 0.9), (100, 0.7), (100, 0.5), (200, 0.1)]);
        assert_eq!(greedy(&it, &c, 300), vec![1, 2]);
    }
}
