//! The row filter of KnapsackSlice: rows that can never set a keep bit are
//! dropped before the table is sized. The result is the spec's (the proof
//! is on [`drop_dominated`]); the table is smaller, often by far.

/// Removes rows that can never set a keep bit. A row of weight `d` and
/// value `v` is such a row if the rows before it include a set `D` of rows
/// of weight `<= d` and value `>= v` that weighs more than `capacity - d`:
/// for every cell `w <= capacity`, a best selection for `w - d` weighs at
/// most `capacity - d`, so it misses a row of `D`, and adding that one
/// instead gives `dp[w] >= dp[w - d] + v`. The row changes no cell up to
/// the capacity and sets no keep bit there; removing it leaves every other
/// row's bits and the result as they were (and a removed row is in no
/// later `D`).
///
/// Two choices of `D`: the first `floor(capacity / d)` rows of weight `d`
/// (the smallest of their values deciding); and, when the values are
/// non-increasing (Sort-stage order, so every earlier row has a value
/// `>= v`), all rows of weight `<= d` kept so far, weighed with prefix
/// sums over the distinct weights rebuilt every [`PREFIX_PERIOD`] kept rows
/// or more (an older sum is smaller, so still a valid one). With many
/// candidates for a small capacity, most rows go.
///
/// Time O(N log N) at most, memory O(N): tables per distinct weight.
/// Returns the prefix-sum entries rebuilt in all (what the tests hold the
/// rebuilds to).
pub(super) fn drop_dominated(
    rows: &mut Vec<(u32, i64, i64)>,
    capacity: i64,
    filter: &mut Filter,
) -> usize {
    let Filter {
        weights,
        rank_of,
        per_weight,
        prefix,
    } = filter;
    // The rows' distinct weights in increasing order, and how to find a
    // weight's rank: a table over the weights when the capacity is small
    // next to the rows, else a binary search.
    weights.clear();
    rank_of.clear();
    let direct = (capacity as u128) < 4 * rows.len() as u128;
    if direct {
        rank_of.resize(capacity as usize + 1, 0);
        rows.iter().for_each(|r| rank_of[r.1 as usize] = 1);
        for (d, rank) in rank_of.iter_mut().enumerate() {
            if *rank == 1 {
                *rank = weights.len() as u32;
                weights.push(d as i64);
            }
        }
    } else {
        weights.extend(rows.iter().map(|r| r.1));
        weights.sort_unstable();
        weights.dedup();
    }
    let rank = |d: i64| -> usize {
        if direct {
            rank_of[d as usize] as usize
        } else {
            weights
                .binary_search(&d)
                .expect("every row's weight is listed")
        }
    };
    let sorted = rows.windows(2).all(|w| w[0].2 >= w[1].2);
    // Per weight: rows kept, the smallest value among the first k of them.
    per_weight.clear();
    per_weight.resize(weights.len(), (0, i64::MAX));
    // prefix[r]: total weight of the kept rows of the r + 1 lightest
    // weights, as of the last rebuild (saturating).
    prefix.clear();
    prefix.resize(weights.len(), 0);
    // Rebuilds cost O(weights): at most 16 x the kept rows in all.
    let period = PREFIX_PERIOD.max(weights.len() / 16);
    let (mut since, mut rebuilt) = (0, 0);
    rows.retain(|&(_, d, v)| {
        let r = rank(d);
        let k = capacity / d;
        let (kept, smallest) = per_weight[r];
        if (kept >= k && v <= smallest) || (sorted && prefix[r] > capacity - d) {
            return false;
        }
        // Past the first k rows of the weight, a kept row is worth more
        // than `smallest` (or the test above dropped it): the minimum is
        // that of the first k.
        per_weight[r] = (kept + 1, smallest.min(v));
        since += 1;
        if sorted && since >= period {
            since = 0;
            let mut total = 0i64;
            for ((p, &(kept, _)), &w) in
                prefix.iter_mut().zip(per_weight.iter()).zip(weights.iter())
            {
                total = total.saturating_add(kept.saturating_mul(w));
                *p = total;
            }
            rebuilt += prefix.len();
        }
        true
    });
    rebuilt
}

/// [`drop_dominated`]'s tables, kept in the scratch.
#[derive(Default)]
pub(super) struct Filter {
    /// The rows' distinct weights, increasing.
    weights: Vec<i64>,
    /// Per weight up to the capacity, its rank in `weights` (small capacities).
    rank_of: Vec<u32>,
    /// Per rank: rows kept, the smallest value among the first k of them.
    per_weight: Vec<(i64, i64)>,
    /// Per rank: total weight of the rows kept up to that rank.
    prefix: Vec<i64>,
}

impl Filter {
    pub(super) fn bytes(&self) -> usize {
        self.weights.capacity() * 8
            + self.rank_of.capacity() * 4
            + self.per_weight.capacity() * 16
            + self.prefix.capacity() * 8
    }
}

/// Kept rows between two rebuilds of [`drop_dominated`]'s prefix sums (at
/// least).
const PREFIX_PERIOD: usize = 64;

#[cfg(test)]
mod tests {
    use super::super::{knapsack, reference, scaled_value};
    use super::*;
    use crate::items::Items;
    use crate::testing::Rng;

    #[test]
    fn dropped_rows_set_no_keep_bit_in_the_full_dp() {
        // The filter's claim itself: in the spec's DP over all rows, a row
        // it drops never sets a keep bit at any cell up to the capacity.
        let mut rng = Rng(0x0123_4567_89AB_CDEF);
        let mut below = |n| rng.below(n);
        let mut dropped_total = 0;
        for case in 0..300 {
            let n = 1 + below(400) as usize;
            let capacity = 1 + below(if case % 3 == 0 { 2000 } else { 300 }) as i64;
            let max_weight = 1 + below(capacity as u64 + 20);
            let mut rows: Vec<(u32, i64, i64)> = (0..n as u32)
                .map(|i| (i, 1 + below(max_weight) as i64, 1 + below(50) as i64))
                .filter(|r| r.1 <= capacity)
                .collect();
            if case % 2 == 0 {
                rows.sort_by_key(|r| std::cmp::Reverse(r.2));
            }
            let mut kept = rows.clone();
            drop_dominated(&mut kept, capacity, &mut Filter::default());
            let cap = capacity as usize;
            let mut dp = vec![0i64; cap + 1];
            let mut kept_iter = kept.iter().peekable();
            for &(i, d, v) in &rows {
                let is_kept = kept_iter.peek().is_some_and(|k| k.0 == i);
                if is_kept {
                    kept_iter.next();
                }
                for w in (d as usize..=cap).rev() {
                    if dp[w - d as usize] + v > dp[w] {
                        assert!(is_kept, "case {case}: dropped row {i} sets cell {w}");
                        dp[w] = dp[w - d as usize] + v;
                    }
                }
                dropped_total += !is_kept as usize;
            }
            assert!(kept_iter.next().is_none(), "kept rows keep their order");
        }
        assert!(dropped_total > 10_000, "only {dropped_total} rows dropped");
    }

    #[test]
    fn the_rank_table_is_used_only_below_four_cells_per_row() {
        // A table of capacity + 1 ranks is the quick look-up but its memory
        // grows with the capacity: used while the capacity is below 4 x the
        // rows (so memory stays O(N)), a binary search over the distinct
        // weights above.
        for (capacity, table) in [(3, true), (39, true), (40, false), (1_000_000, false)] {
            let mut rows: Vec<(u32, i64, i64)> =
                (0..10).map(|i| (i, 1 + i as i64 % 3, 10)).collect();
            let mut filter = Filter::default();
            drop_dominated(&mut rows, capacity, &mut filter);
            let want = if table { capacity as usize + 1 } else { 0 };
            assert_eq!(filter.rank_of.len(), want, "capacity {capacity}, 10 rows");
        }
    }

    #[test]
    fn prefix_rebuilds_cost_at_most_16_entries_per_kept_row() {
        // 5,000 rows in score order, each of its own weight, none dropped
        // (a large capacity): a rebuild every 64 kept rows would cost
        // 78 x 5,000 entries; every 5,000 / 16 = 312 kept rows, 16 x 5,000.
        let mut rows: Vec<(u32, i64, i64)> = (0..5000)
            .map(|i| (i, 1 + i as i64, 10_000 - i as i64))
            .collect();
        let rebuilt = drop_dominated(&mut rows, 1 << 40, &mut Filter::default());
        assert_eq!(rows.len(), 5000);
        assert!(
            rebuilt <= 16 * rows.len(),
            "{rebuilt} prefix entries rebuilt for 5,000 kept rows"
        );
        // And with few weights, a rebuild every 64 kept rows: 78 of 3 entries.
        let mut rows: Vec<(u32, i64, i64)> = (0..5000)
            .map(|i| (i, 1 + i as i64 % 3, 10_000 - i as i64))
            .collect();
        assert_eq!(
            drop_dominated(&mut rows, 1 << 40, &mut Filter::default()),
            78 * 3
        );
    }

    #[test]
    fn lighter_kept_rows_drop_a_row_once_they_weigh_more_than_its_room() {
        // Capacity 100, in score order: 64 rows of weight 1 (kept; the
        // prefix sums are rebuilt after them: 64), then rows of weight 50,
        // 40 and 30. Rows of weight <= 50 weigh 64 > 100 - 50 and > 100 -
        // 40: those two go; 64 <= 100 - 30 keeps the last.
        let mut rows: Vec<(u32, i64, i64)> = (0..64).map(|i| (i, 1, 1000 - i as i64)).collect();
        rows.extend([(64, 50, 500), (65, 40, 400), (66, 30, 300)]);
        let rebuilt = drop_dominated(&mut rows, 100, &mut Filter::default());
        let kept: Vec<u32> = rows.iter().map(|r| r.0).collect();
        assert_eq!(kept, (0..64).chain([66]).collect::<Vec<u32>>());
        assert_eq!(rebuilt, 4, "one rebuild of the four weights' sums");
        // Out of score order the rule does not apply: nothing dropped, and
        // no prefix sums built.
        let mut rows: Vec<(u32, i64, i64)> = (0..64).map(|i| (i, 1, 1000 + i as i64)).collect();
        rows.extend([(64, 50, 500), (65, 40, 400), (66, 30, 300)]);
        assert_eq!(drop_dominated(&mut rows, 100, &mut Filter::default()), 0);
        assert_eq!(rows.len(), 67);
    }

    #[test]
    fn filter_bytes_count_every_table_by_element_size() {
        let mut f = Filter::default();
        assert_eq!(f.bytes(), 0);
        f.weights.reserve_exact(3);
        f.rank_of.reserve_exact(5);
        f.per_weight.reserve_exact(7);
        f.prefix.reserve_exact(11);
        let want = f.weights.capacity() * 8
            + f.rank_of.capacity() * 4
            + f.per_weight.capacity() * 16
            + f.prefix.capacity() * 8;
        assert_eq!(f.bytes(), want);
        assert!(want >= 3 * 8 + 5 * 4 + 7 * 16 + 11 * 8);
    }

    #[test]
    fn dominated_rows_are_dropped_and_the_first_of_each_weight_kept() {
        // Capacity 10: at most 5 rows of weight 2 matter, 3 of weight 3.
        let mut rows: Vec<(u32, i64, i64)> = (0..8)
            .map(|i| (i, 2, 100 - i as i64))
            .chain((8..12).map(|i| (i, 3, 50)))
            .chain([(12, 2, 200), (13, 3, 10)])
            .collect();
        drop_dominated(&mut rows, 10, &mut Filter::default());
        let kept: Vec<u32> = rows.iter().map(|r| r.0).collect();
        // Weight 2: rows 0..5 kept (smallest 96), 5..8 (95..93) dropped,
        // 12 (200 > 96) kept. Weight 3: rows 8..11 kept, 11 and 13 (values
        // 50 and 10, not above 50) dropped.
        assert_eq!(kept, vec![0, 1, 2, 3, 4, 8, 9, 10, 12]);
    }

    #[test]
    fn sorted_rows_are_also_dropped_by_lighter_dominators() {
        // 3000 candidates in score order, weights 1..=40, capacity 400:
        // the lighter-rows rule drops rows the same-weight rule keeps, and
        // the result is still the spec's.
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut below = |n| rng.below(n);
        let spec: Vec<(i64, f64, &str)> = (0..3000)
            .map(|_| (1 + below(40) as i64, below(10_000) as f64 / 1e4, "Message"))
            .collect();
        let items = Items::from_spec(&spec);
        let cands = crate::sort::sort_stage(&items.view());
        let mut rows: Vec<(u32, i64, i64)> = cands
            .iter()
            .map(|&i| {
                (
                    i,
                    items.view().tokens(i),
                    scaled_value(items.view().score(i)),
                )
            })
            .filter(|r| r.2 > 0)
            .collect();
        let mut per_weight_count = [0i64; 41];
        rows.iter()
            .for_each(|r| per_weight_count[r.1 as usize] += 1);
        let same_weight_bound: i64 = (1..=40)
            .map(|d| per_weight_count[d as usize].min(400 / d))
            .sum();
        drop_dominated(&mut rows, 400, &mut Filter::default());
        assert!(
            (rows.len() as i64) < same_weight_bound * 3 / 4,
            "{} rows left, same-weight rule alone: {same_weight_bound}",
            rows.len()
        );
        assert_eq!(
            knapsack(&items.view(), &cands, 400, 1, usize::MAX).unwrap(),
            reference::knapsack(
                items.view().tokens_slice(),
                items.view().scores(),
                &cands,
                400,
                1
            )
        );
    }
}
