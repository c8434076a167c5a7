//! KnapsackSlice (spec 001): 0/1 knapsack DP over discretised weights, with
//! a keep table of one bit per cell and vectorised rows (see [`kernel`]).

use std::cell::RefCell;

use super::kernel::{self, Bits32, Kernel};
use crate::error::{invalid, Error, Result};
use crate::items::Items;

/// Default bucket size of the spec.
pub const DEFAULT_BUCKET_SIZE: i64 = 100;

/// Score scaling factor of the spec: 4 decimal digits.
const SCORE_SCALE: f64 = 10000.0;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knapsack {
    pub bucket_size: i64,
}

impl Knapsack {
    pub fn new(bucket_size: i64) -> Result<Self> {
        if bucket_size <= 0 {
            return invalid!("bucket_size is {bucket_size}; it must be > 0");
        }
        Ok(Knapsack { bucket_size })
    }
}

/// The integer DP value of a score: max(0, floor(score * 10000)), saturating.
/// Truncation is floor for every product >= 0, and for one in (-1, 0) it
/// gives 0 where floor gives -1: both end at 0 (and the cast, unlike
/// `floor` without SSE4.1, is no library call).
#[inline]
fn scaled_value(score: f64) -> i64 {
    ((score * SCORE_SCALE) as i64).max(0)
}

/// ceil(tokens / bucket) for tokens > 0, without overflow.
#[inline]
fn ceil_div(tokens: i64, bucket: i64) -> i64 {
    (tokens - 1) / bucket + 1
}

/// KNAPSACK-SLICE over `cands` with `target` tokens. Output: zero-token items
/// in `cands` order, then the DP selection in reconstruction order.
///
/// Candidates whose discretised weight exceeds the capacity, or whose value
/// is 0, can never set a keep bit (`dp` is non-decreasing in `w`), so they
/// are left out of the table: the result is the same, the table smaller.
pub fn knapsack(
    items: &Items,
    cands: &[u32],
    target: i64,
    bucket: i64,
    memory_limit: usize,
) -> Result<Vec<u32>> {
    if cands.is_empty() || target <= 0 {
        return Ok(Vec::new());
    }
    SCRATCH.with(|scratch| {
        // A nested call on this thread (none today) would get fresh buffers.
        let mut fresh = Scratch::default();
        let mut guard = scratch.try_borrow_mut();
        let scratch = match guard.as_deref_mut() {
            Ok(s) => s,
            Err(_) => &mut fresh,
        };
        let out = solve(scratch, items, cands, target, bucket, memory_limit);
        scratch.trim();
        out
    })
}

/// [`knapsack`] with the buffers of `scratch`.
fn solve(
    scratch: &mut Scratch,
    items: &Items,
    cands: &[u32],
    target: i64,
    bucket: i64,
    memory_limit: usize,
) -> Result<Vec<u32>> {
    let Scratch {
        keep,
        dp32,
        dp_bits32,
        dp64,
        rows,
        filter,
    } = scratch;
    let mut result: Vec<u32> = cands
        .iter()
        .copied()
        .filter(|&i| items.tokens(i) == 0)
        .collect();
    let capacity = target / bucket;
    if capacity == 0 {
        return Ok(result);
    }
    // (item, discretised weight, value) of the rows that can matter.
    rows.clear();
    rows.reserve(cands.len());
    rows.extend(cands.iter().filter_map(|&i| {
        let tokens = items.tokens(i);
        if tokens <= 0 {
            return None;
        }
        let dw = ceil_div(tokens, bucket);
        let value = scaled_value(items.score(i));
        (dw <= capacity && value > 0).then_some((i, dw, value))
    }));
    drop_dominated(rows, capacity, filter);
    if rows.is_empty() {
        return Ok(result);
    }

    let cells = capacity as u128 + 1;
    let words_per_row = cells.div_ceil(64);
    let total_value: i128 = rows.iter().map(|r| r.2 as i128).sum();
    let narrow = total_value <= i32::MAX as i128;
    let lane_bytes = if narrow { 4 } else { 8 };
    let table_bytes = rows.len() as u128 * words_per_row * 8;
    let max_weight = rows.iter().map(|r| r.1 as usize).max().unwrap_or(1);
    let dp_bytes = kernel::dp_len(words_per_row as usize, max_weight) as u128 * lane_bytes;
    let needed = table_bytes + dp_bytes;
    if needed > memory_limit as u128 {
        return Err(Error::Capacity(format!(
            "knapsack needs {needed} bytes ({} items x {cells} cells at bucket_size {bucket}), \
             over the memory limit of {memory_limit} bytes",
            rows.len()
        )));
    }
    // needed <= memory_limit <= usize::MAX, so these casts are exact.
    let words_per_row = words_per_row as usize;
    let kernel = Kernel::selected();
    let keep = grow(keep, rows.len() * words_per_row, needed)?;
    let mut plan = Plan {
        kernel,
        max_weight,
        keep: &mut keep[..],
        words: words_per_row,
        capacity: capacity as usize,
        rows,
    };
    if kernel::use_bits32(kernel, i64::try_from(total_value).unwrap_or(i64::MAX)) {
        let dp = dp_array(dp_bits32, words_per_row, max_weight, needed)?;
        run_rows(&mut plan, dp, Bits32::new);
    } else if narrow {
        let dp = dp_array(dp32, words_per_row, max_weight, needed)?;
        run_rows(&mut plan, dp, |v| v as i32);
    } else if total_value <= i64::MAX as i128 {
        let dp = dp_array(dp64, words_per_row, max_weight, needed)?;
        run_rows(&mut plan, dp, |v| v);
    } else {
        let dp = dp_array(dp64, words_per_row, max_weight, needed)?;
        for (row, &(_, dw, value)) in keep.chunks_exact_mut(words_per_row).zip(rows.iter()) {
            kernel::row_saturating(dp, max_weight, row, dw as usize, value);
        }
    }
    let mut remaining = capacity as usize;
    for r in (0..rows.len()).rev() {
        if keep[r * words_per_row + (remaining >> 6)] >> (remaining & 63) & 1 == 1 {
            result.push(rows[r].0);
            remaining -= rows[r].1 as usize;
        }
    }
    Ok(result)
}

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
fn drop_dominated(rows: &mut Vec<(u32, i64, i64)>, capacity: i64, filter: &mut Filter) {
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
    let mut since = 0;
    rows.retain(|&(_, d, v)| {
        let r = rank(d);
        let k = capacity / d;
        let (kept, smallest) = per_weight[r];
        if (kept >= k && v <= smallest) || (sorted && prefix[r] > capacity - d) {
            return false;
        }
        per_weight[r] = (kept + 1, if kept < k { smallest.min(v) } else { smallest });
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
        }
        true
    });
}

/// [`drop_dominated`]'s tables, kept in the scratch.
#[derive(Default)]
struct Filter {
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
    fn bytes(&self) -> usize {
        self.weights.capacity() * 8
            + self.rank_of.capacity() * 4
            + self.per_weight.capacity() * 16
            + self.prefix.capacity() * 8
    }
}

/// Kept rows between two rebuilds of [`drop_dominated`]'s prefix sums (at
/// least).
const PREFIX_PERIOD: usize = 64;

/// What [`run_rows`] works on besides the DP array.
struct Plan<'a> {
    kernel: Kernel,
    max_weight: usize,
    /// `rows.len()` rows of `words` keep words.
    keep: &'a mut [u64],
    words: usize,
    capacity: usize,
    rows: &'a [(u32, i64, i64)],
}

/// Runs the DP rows two at a time (see [`kernel`]), the last one alone
/// when their number is odd, computing only the cells the result depends on.
///
/// Above: cells at or above the total weight `s` of the rows run so far all
/// hold their total value `v` (every row fits there), so a row of weight
/// `d` and value `u > 0` turns every cell at or above `s + d` into `v + u`
/// and sets all their keep bits. A pass computes only the blocks below
/// `s + da + db` (and the one containing it) and fills the keep words above
/// with ones; the DP cells above hold `v` implicitly and are written when a
/// later pass first reaches them.
///
/// Below: reconstruction reads row `r`'s keep bits only at cells
/// `capacity - (weight of the rows after r)` and up, and those cells only
/// depend on cells of earlier rows at least that far up. A pass starts at
/// the block holding row a's lowest such cell; cells below it may go stale,
/// and are never read for a cell that matters.
///
/// So while the rows run so far (or the rows still to run) weigh less than
/// the capacity (few or light candidates, a generous budget), most of the
/// table is skipped; the result is that of the full DP.
fn run_rows<T: kernel::Lane>(plan: &mut Plan<'_>, dp: &mut [T], lane: impl Fn(i64) -> T) {
    let Plan {
        kernel,
        max_weight,
        ref mut keep,
        words,
        capacity,
        rows,
    } = *plan;
    let pad = kernel::pad(max_weight);
    let cells = 64 * words;
    // Rows run so far: total weight (capped at `cells`) and value; cells
    // below `valid` hold their DP values, those above hold `value`.
    let (mut weight, mut value, mut valid) = (0usize, T::default(), 0usize);
    // Total weight of the rows not run yet (each weighs at most the capacity).
    let mut after: u128 = rows.iter().map(|r| r.1 as u128).sum();
    let mut row_pairs = keep.chunks_mut(2 * words).zip(rows.chunks(2));
    for (two, r) in &mut row_pairs {
        let a = (r[0].1 as usize, lane(r[0].2));
        let b = r.get(1).map(|r| (r.1 as usize, lane(r.2)));
        let reach = weight + a.0 + b.map_or(0, |b| b.0);
        let blocks = if reach >= cells {
            words
        } else {
            reach / 64 + 1
        };
        if 64 * blocks > valid {
            dp[pad + valid..pad + 64 * blocks].fill(value);
            valid = 64 * blocks;
        }
        // Row a's lowest cell that matters.
        after -= a.0 as u128;
        let from = (capacity as u128).saturating_sub(after) as usize / 64;
        let (keep_a, keep_b) = two.split_at_mut(words);
        keep_a[blocks..].fill(u64::MAX);
        let b = b.map(|b| {
            after -= b.0 as u128;
            keep_b[blocks..].fill(u64::MAX);
            (&mut keep_b[..blocks], b)
        });
        value = value.wrap_add(a.1);
        if let Some((_, b)) = &b {
            value = value.wrap_add(b.1);
        }
        kernel::rows(kernel, dp, max_weight, &mut keep_a[..blocks], a, b, from);
        weight = reach.min(cells);
    }
}

/// Scratch buffers kept per thread between slice calls, so that repeated
/// calls of similar size allocate nothing.
#[derive(Default)]
struct Scratch {
    keep: Vec<u64>,
    dp32: Vec<i32>,
    dp_bits32: Vec<Bits32>,
    dp64: Vec<i64>,
    /// (item, discretised weight, value) of the rows that can matter.
    rows: Vec<(u32, i64, i64)>,
    filter: Filter,
}

/// Scratch larger than this is released after the call instead of kept.
const SCRATCH_RETAIN_BYTES: usize = 64 << 20;

impl Scratch {
    fn trim(&mut self) {
        let bytes = self.keep.capacity() * 8
            + (self.dp32.capacity() + self.dp_bits32.capacity()) * 4
            + self.dp64.capacity() * 8
            + self.rows.capacity() * std::mem::size_of::<(u32, i64, i64)>()
            + self.filter.bytes();
        if bytes > SCRATCH_RETAIN_BYTES {
            *self = Scratch::default();
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// `v` with exactly `len` elements; old contents are left (every keep word
/// is rewritten by its row). Allocation failure is a capacity error.
fn grow<T: Copy + Default>(v: &mut Vec<T>, len: usize, needed: u128) -> Result<&mut [T]> {
    if len > v.len() {
        v.try_reserve_exact(len - v.len()).map_err(|e| {
            Error::Capacity(format!(
                "cannot allocate the knapsack table ({needed} bytes): {e}"
            ))
        })?;
        v.resize(len, T::default());
    }
    Ok(&mut v[..len])
}

/// `v` as an initialised DP array for `words` keep words.
fn dp_array<T: kernel::Lane>(
    v: &mut Vec<T>,
    words: usize,
    max_weight: usize,
    needed: u128,
) -> Result<&mut [T]> {
    // 64 bytes of slack so the array can start on a cache line: the
    // kernels' loads and stores of cell-aligned vectors then never straddle
    // two lines.
    let slack = 64 / std::mem::size_of::<T>();
    let len = kernel::dp_len(words, max_weight);
    let all = grow(v, len + slack, needed)?;
    let skip = all.as_ptr().align_offset(64).min(slack);
    let dp = &mut all[skip..skip + len];
    kernel::init_dp(dp, max_weight);
    Ok(dp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::NewItem;

    fn run(spec: &[(i64, f64)], target: i64, bucket: i64) -> Vec<u32> {
        let spec: Vec<_> = spec.iter().map(|&(t, s)| (t, s, "Message")).collect();
        let it = Items::from_spec(&spec);
        let c: Vec<u32> = (0..spec.len() as u32).collect();
        knapsack(&it, &c, target, bucket, usize::MAX).unwrap()
    }

    /// Spec 001 as written: every positive-token candidate a row (value 0
    /// and over-capacity ones included), a full i64 table of keep flags.
    fn spec_knapsack(items: &Items, cands: &[u32], target: i64, bucket: i64) -> Vec<u32> {
        let mut out: Vec<u32> = cands
            .iter()
            .copied()
            .filter(|&i| items.tokens(i) == 0)
            .collect();
        let cap = (target / bucket) as usize;
        let rows: Vec<u32> = cands
            .iter()
            .copied()
            .filter(|&i| items.tokens(i) > 0)
            .collect();
        let mut dp = vec![0i64; cap + 1];
        let mut keep = vec![vec![false; cap + 1]; rows.len()];
        for (r, &i) in rows.iter().enumerate() {
            let d = ceil_div(items.tokens(i), bucket) as usize;
            let v = scaled_value(items.score(i));
            for w in (d..=cap).rev() {
                if dp[w - d] + v > dp[w] {
                    dp[w] = dp[w - d] + v;
                    keep[r][w] = true;
                }
            }
        }
        let mut w = cap;
        for r in (0..rows.len()).rev() {
            if keep[r][w] {
                out.push(rows[r]);
                w -= ceil_div(items.tokens(rows[r]), bucket) as usize;
            }
        }
        out
    }

    /// A seeded generator: `below(n)` is in `0..n`.
    fn xorshift(mut state: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        }
    }

    #[test]
    fn matches_the_plain_spec_dp_with_many_rows_per_weight() {
        // Few distinct weights and many candidates (rows get dropped as
        // dominated), capacities small and large (the skipped top region),
        // candidates in score order and shuffled.
        let mut below = xorshift(0x2545_F491_4F6C_DD1Du64);
        for case in 0..400 {
            let n = 1 + below(300) as usize;
            let bucket = [1, 10, 100][below(3) as usize];
            let max_tokens = 1 + below(2000);
            let spec: Vec<(i64, f64, &str)> = (0..n)
                .map(|_| {
                    let t = if below(10) == 0 {
                        0
                    } else {
                        1 + below(max_tokens)
                    };
                    (t as i64, below(40) as f64 / 40.0, "Message")
                })
                .collect();
            let items = Items::from_spec(&spec);
            let wide = below(2) == 0;
            let target = 1 + below(if wide { 20_000 } else { 3000 }) as i64;
            let mut cands = crate::sort::sort_stage(&items);
            if case % 2 == 1 {
                for i in (1..cands.len()).rev() {
                    cands.swap(i, below(i as u64 + 1) as usize);
                }
            }
            let got = knapsack(&items, &cands, target, bucket, usize::MAX).unwrap();
            let want = spec_knapsack(&items, &cands, target, bucket);
            assert_eq!(
                got, want,
                "case {case}: n {n} target {target} bucket {bucket}"
            );
        }
    }

    #[test]
    fn dropped_rows_set_no_keep_bit_in_the_full_dp() {
        // The filter's claim itself: in the spec's DP over all rows, a row
        // it drops never sets a keep bit at any cell up to the capacity.
        let mut below = xorshift(0x0123_4567_89AB_CDEF);
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
        let mut below = xorshift(0x9E37_79B9_7F4A_7C15u64);
        let spec: Vec<(i64, f64, &str)> = (0..3000)
            .map(|_| (1 + below(40) as i64, below(10_000) as f64 / 1e4, "Message"))
            .collect();
        let items = Items::from_spec(&spec);
        let cands = crate::sort::sort_stage(&items);
        let mut rows: Vec<(u32, i64, i64)> = cands
            .iter()
            .map(|&i| (i, items.tokens(i), scaled_value(items.score(i))))
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
            knapsack(&items, &cands, 400, 1, usize::MAX).unwrap(),
            spec_knapsack(&items, &cands, 400, 1)
        );
    }

    #[test]
    fn bucket_size_must_be_positive() {
        assert!(Knapsack::new(0).is_err());
        assert!(Knapsack::new(-3).is_err());
        assert!(Knapsack::new(1).is_ok());
    }

    // Edge-case table of spec 001.
    #[test]
    fn empty_and_non_positive_target() {
        assert!(run(&[], 100, 1).is_empty());
        assert!(run(&[(0, 0.5)], 0, 1).is_empty());
        assert!(run(&[(0, 0.5)], -1, 1).is_empty());
    }

    #[test]
    fn all_zero_token_items_selected() {
        assert_eq!(run(&[(0, 0.1), (0, 0.9)], 10, 100), vec![0, 1]);
    }

    #[test]
    fn zero_capacity_gives_zero_token_items_only() {
        assert_eq!(run(&[(10, 0.9), (0, 0.1)], 99, 100), vec![1]);
    }

    #[test]
    fn all_candidates_exceed_capacity() {
        assert_eq!(run(&[(500, 0.9), (0, 0.1), (301, 0.5)], 300, 100), vec![1]);
    }

    #[test]
    fn single_candidate_fits_with_zero_token_items() {
        assert_eq!(run(&[(100, 0.5), (0, 0.2)], 100, 1), vec![1, 0]);
    }

    #[test]
    fn spec_example_prefers_optimal_over_greedy() {
        assert_eq!(
            run(&[(250, 0.7), (150, 0.5), (150, 0.45)], 300, 100),
            vec![0]
        );
    }

    #[test]
    fn output_is_zero_tokens_then_reconstruction_order() {
        // All fit: reconstruction walks candidates in reverse.
        assert_eq!(
            run(&[(10, 0.9), (0, 0.1), (10, 0.8), (10, 0.7)], 100, 1),
            vec![1, 3, 2, 0]
        );
    }

    #[test]
    fn tiny_scores_have_value_zero_and_are_not_selected() {
        assert_eq!(run(&[(10, 0.00009), (10, 0.5)], 100, 1), vec![1]);
    }

    #[test]
    fn weights_round_up_capacity_rounds_down() {
        // 101 tokens -> 2 buckets of 100; capacity floor(199/100) = 1.
        assert!(run(&[(101, 0.9)], 199, 100).is_empty());
        assert_eq!(run(&[(100, 0.9)], 199, 100), vec![0]);
    }

    #[test]
    fn memory_limit_gives_capacity_error() {
        let mut it = Items::new();
        it.push(NewItem {
            tokens: 1,
            score: 0.5,
            kind: None,
        })
        .unwrap();
        let e = knapsack(&it, &[0], 1 << 40, 1, 1 << 20).unwrap_err();
        assert!(matches!(e, Error::Capacity(_)), "{e:?}");
        assert!(
            e.to_string().contains("memory limit of 1048576 bytes"),
            "{e}"
        );
    }

    #[test]
    fn huge_scores_and_tokens_do_not_overflow() {
        let got = run(
            &[(i64::MAX, f64::MAX), (1, f64::MAX), (1, 1e300)],
            i64::MAX,
            i64::MAX / 4,
        );
        // Both small items saturate at value i64::MAX: the first one wins the tie.
        assert_eq!(got, vec![1]);
    }
}
