//! KnapsackSlice (spec 001): 0/1 knapsack DP over discretised weights, with
//! a keep table of one bit per cell and vectorised rows (see [`kernel`]).
//!
//! Read beside the spec: [`solve`] follows its steps 1-6. `filter.rs`
//! drops rows that can never set a keep bit (with the proof), `rows.rs`
//! runs the DP rows through the kernels computing only the cells the
//! result depends on, `scratch.rs` keeps the buffers per thread, and
//! [`reference`] is the spec's algorithm as written, the tests' oracle.

pub(crate) mod choice;
mod filter;
mod reduce;
pub mod reference;
mod rows;
mod scratch;

use super::kernel::{self, Bits32, Kernel};
use crate::error::{invalid, Error, Result};
use crate::items::View;
use filter::drop_dominated;
use rows::{run_rows, Plan};
use scratch::{dp_array, grow, with_scratch, Scratch};

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
pub(crate) fn scaled_value(score: f64) -> i64 {
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
    items: &View<'_>,
    cands: &[u32],
    target: i64,
    bucket: i64,
    memory_limit: usize,
) -> Result<Vec<u32>> {
    if cands.is_empty() || target <= 0 {
        return Ok(Vec::new());
    }
    with_scratch(|scratch| solve(scratch, items, cands, target, bucket, memory_limit))
}

/// [`knapsack`] with the buffers of `scratch`, step by step as spec 001.
fn solve(
    scratch: &mut Scratch,
    items: &View<'_>,
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
        ..
    } = scratch;
    // Step 1: zero-token items are always included (they start the output,
    // step 6); negative-token items are never candidates.
    let mut result: Vec<u32> = cands
        .iter()
        .copied()
        .filter(|&i| items.tokens(i) == 0)
        .collect();
    // Step 3 (capacity first: with none, no row can matter).
    let capacity = target / bucket;
    if capacity == 0 {
        return Ok(result);
    }
    // Steps 2-3: (item, discretised weight, integer value) of the rows that
    // can set a keep bit: not over the capacity, value above 0, and not
    // dominated (`filter.rs`).
    rows.clear();
    rows.reserve(cands.len());
    rows.extend(cands.iter().filter_map(|&i| {
        let tokens = items.tokens(i);
        if tokens <= 0 {
            return None;
        }
        let dw = ceil_div(tokens, bucket);
        let value = items.value(i, scaled_value);
        (dw <= capacity && value > 0).then_some((i, dw, value))
    }));
    drop_dominated(rows, capacity, filter);
    if rows.is_empty() {
        return Ok(result);
    }
    // Step 4: the DP rows into the keep table, within the memory limit.
    let size = TableSize::of(rows, capacity, bucket, memory_limit)?;
    let keep = grow(keep, rows.len() * size.words, size.bytes)?;
    let mut plan = Plan {
        kernel: Kernel::selected(),
        max_weight: size.max_weight,
        keep: &mut keep[..],
        words: size.words,
        capacity: capacity as usize,
        rows,
    };
    let (words, max_weight, needed) = (size.words, size.max_weight, size.bytes);
    match size.total_value {
        Some(total) if kernel::use_bits32(plan.kernel, total) => {
            let dp = dp_array(dp_bits32, words, max_weight, needed)?;
            run_rows(&mut plan, dp, Bits32::new);
        }
        Some(total) if total <= i32::MAX as i64 => {
            let dp = dp_array(dp32, words, max_weight, needed)?;
            run_rows(&mut plan, dp, |v| v as i32);
        }
        Some(_) => {
            let dp = dp_array(dp64, words, max_weight, needed)?;
            run_rows(&mut plan, dp, |v| v);
        }
        None => {
            // The total overflows every lane: scalar rows that saturate.
            let dp = dp_array(dp64, words, max_weight, needed)?;
            for (row, &(_, dw, value)) in keep.chunks_exact_mut(words).zip(rows.iter()) {
                kernel::row_saturating(dp, max_weight, row, dw as usize, value);
            }
        }
    }
    // Steps 5-6: reconstruction, after the zero-token items.
    reconstruct(keep, words, rows, capacity as usize, &mut result);
    Ok(result)
}

/// The shape and size of the DP for the rows left after the filter.
struct TableSize {
    /// Keep words per row: `capacity + 1` cells, one bit each.
    words: usize,
    max_weight: usize,
    /// The sum of the rows' values; None when it overflows `i64`.
    total_value: Option<i64>,
    /// Keep table and DP array, in bytes.
    bytes: u128,
}

impl TableSize {
    /// The size, or a capacity error past `memory_limit`.
    fn of(
        rows: &[(u32, i64, i64)],
        capacity: i64,
        bucket: i64,
        memory_limit: usize,
    ) -> Result<TableSize> {
        let cells = capacity as u128 + 1;
        let words = cells.div_ceil(64);
        let total: i128 = rows.iter().map(|r| r.2 as i128).sum();
        let lane_bytes = if total <= i32::MAX as i128 { 4 } else { 8 };
        let max_weight = rows.iter().map(|r| r.1 as usize).max().unwrap_or(1);
        let table_bytes = rows.len() as u128 * words * 8;
        let dp_bytes = kernel::dp_len(words as usize, max_weight) as u128 * lane_bytes;
        let bytes = table_bytes + dp_bytes;
        if bytes > memory_limit as u128 {
            return Err(Error::Capacity(format!(
                "knapsack needs {bytes} bytes ({} items x {cells} cells at bucket_size {bucket}), \
                 over the memory limit of {memory_limit} bytes",
                rows.len()
            )));
        }
        Ok(TableSize {
            // bytes <= memory_limit <= usize::MAX, so this cast is exact.
            words: words as usize,
            max_weight,
            total_value: i64::try_from(total).ok(),
            bytes,
        })
    }
}

/// Step 5: from the last row down, a row whose keep bit is set at the
/// remaining capacity is selected and its weight taken off.
fn reconstruct(
    keep: &[u64],
    words: usize,
    rows: &[(u32, i64, i64)],
    capacity: usize,
    result: &mut Vec<u32>,
) {
    let mut remaining = capacity;
    for r in (0..rows.len()).rev() {
        if keep[r * words + (remaining >> 6)] >> (remaining & 63) & 1 == 1 {
            result.push(rows[r].0);
            remaining -= rows[r].1 as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::Items;
    use crate::items::NewItem;

    fn run(spec: &[(i64, f64)], target: i64, bucket: i64) -> Vec<u32> {
        let spec: Vec<_> = spec.iter().map(|&(t, s)| (t, s, "Message")).collect();
        let it = Items::from_spec(&spec);
        let c: Vec<u32> = (0..spec.len() as u32).collect();
        knapsack(&it.view(), &c, target, bucket, usize::MAX).unwrap()
    }

    #[test]
    fn matches_the_plain_spec_dp_with_many_rows_per_weight() {
        // Few distinct weights and many candidates (rows get dropped as
        // dominated), capacities small and large (the skipped top region),
        // candidates in score order and shuffled.
        let mut rng = crate::testing::Rng(0x2545_F491_4F6C_DD1D);
        let mut below = |n| rng.below(n);
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
            let mut cands = crate::sort::sort_stage(&items.view());
            if case % 2 == 1 {
                for i in (1..cands.len()).rev() {
                    cands.swap(i, below(i as u64 + 1) as usize);
                }
            }
            let got = knapsack(&items.view(), &cands, target, bucket, usize::MAX).unwrap();
            let want = reference::knapsack(
                items.view().tokens_slice(),
                items.view().scores(),
                &cands,
                target,
                bucket,
            );
            assert_eq!(
                got, want,
                "case {case}: n {n} target {target} bucket {bucket}"
            );
        }
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
        let e = knapsack(&it.view(), &[0], 1 << 40, 1, 1 << 20).unwrap_err();
        assert!(matches!(e, Error::Capacity(_)), "{e:?}");
        assert!(
            e.to_string().contains("memory limit of 1048576 bytes"),
            "{e}"
        );
    }

    #[test]
    fn table_size_counts_keep_words_and_the_dp_array() {
        // capacity 127: 128 cells, 2 keep words a row; max weight 70: a
        // DP array of 64 * (70 / 64 + 2) + 128 = 320 cells.
        let small = [(0, 3, 10), (1, 70, 20), (2, 5, i32::MAX as i64 - 30)];
        let size = TableSize::of(&small, 127, 1, usize::MAX).unwrap();
        assert_eq!((size.words, size.max_weight), (2, 70));
        assert_eq!(size.total_value, Some(i32::MAX as i64));
        // 3 rows x 2 words x 8 bytes + 320 cells x 4 bytes (i32 lanes).
        assert_eq!(size.bytes, 48 + 1280);
        let big = [(0, 3, 10), (1, 70, 20), (2, 5, i32::MAX as i64)];
        let size = TableSize::of(&big, 127, 1, usize::MAX).unwrap();
        assert_eq!(size.bytes, 48 + 2560, "i64 lanes past i32::MAX");
        // The limit is inclusive.
        assert!(TableSize::of(&big, 127, 1, 2608).is_ok());
        let e = TableSize::of(&big, 127, 1, 2607).err().unwrap();
        assert!(e.to_string().contains("needs 2608 bytes"), "{e}");
        // A total past i64::MAX is None (the saturating rows).
        let huge = [(0, 1, i64::MAX), (1, 1, 1)];
        assert_eq!(
            TableSize::of(&huge, 10, 1, usize::MAX).unwrap().total_value,
            None
        );
        let exact = [(0, 1, i64::MAX - 1), (1, 1, 1)];
        assert_eq!(
            TableSize::of(&exact, 10, 1, usize::MAX)
                .unwrap()
                .total_value,
            Some(i64::MAX)
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
