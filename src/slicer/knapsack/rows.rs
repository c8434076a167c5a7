//! The DP rows of KnapsackSlice (step 4), two at a time through the
//! vectorised kernels, computing only the cells the result depends on.

use crate::slicer::kernel::{self, Kernel};

/// What [`run_rows`] works on besides the DP array.
pub(super) struct Plan<'a> {
    pub kernel: Kernel,
    pub max_weight: usize,
    /// `rows.len()` rows of `words` keep words.
    pub keep: &'a mut [u64],
    pub words: usize,
    pub capacity: usize,
    pub rows: &'a [(u32, i64, i64)],
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
///
/// Returns the number of keep-word blocks the passes asked the kernel for
/// (`blocks - from` summed over the passes): what the tests hold the
/// skipping to.
pub(super) fn run_rows<T: kernel::Lane>(
    plan: &mut Plan<'_>,
    dp: &mut [T],
    lane: impl Fn(i64) -> T,
) -> usize {
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
    let mut computed = 0;
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
        // `blocks` never shrinks (`reach` grows, or stays at `cells`):
        // fill the cells a pass reaches for the first time.
        dp[pad + valid..pad + 64 * blocks].fill(value);
        valid = 64 * blocks;
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
        computed += blocks.saturating_sub(from);
        weight = reach.min(cells);
    }
    computed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slicer::knapsack::{reconstruct, reference};

    /// Runs `rows` (weight, value) at `capacity` through [`run_rows`] and
    /// the reconstruction: the selection (row numbers) and the blocks
    /// computed.
    fn run(rows: &[(i64, i64)], capacity: usize) -> (Vec<u32>, usize) {
        let rows: Vec<(u32, i64, i64)> = (0..).zip(rows).map(|(i, &(w, v))| (i, w, v)).collect();
        let words = capacity / 64 + 1;
        let max_weight = rows.iter().map(|r| r.1 as usize).max().unwrap();
        let mut keep = vec![0u64; rows.len() * words];
        let mut dp = vec![0i64; kernel::dp_len(words, max_weight)];
        kernel::init_dp(&mut dp, max_weight);
        let mut plan = Plan {
            kernel: Kernel::selected(),
            max_weight,
            keep: &mut keep,
            words,
            capacity,
            rows: &rows,
        };
        let computed = run_rows(&mut plan, &mut dp, |v| v);
        let mut got = Vec::new();
        reconstruct(&keep, words, &rows, capacity, &mut got);
        (got, computed)
    }

    #[test]
    fn computes_only_the_blocks_the_result_depends_on() {
        // 200 rows of weight 50 at capacity 6,399: 100 blocks a row, 100
        // passes, 10,000 blocks for the full table. From above, pass i
        // reaches cell 100 (i + 1) only, so the first 64 passes need
        // i * 100 / 64 + 1 blocks, not 100; from below, once the rows after
        // row a weigh less than 6,399 (the last 64 passes), reconstruction
        // reads nothing below 6,399 - their weight. Both skips: 3,715
        // blocks. Without the one from above (every pass all 100 blocks):
        // 6,832; without the one from below (every pass from block 0): 6,883.
        let spec: Vec<(i64, i64)> = (0..200).map(|i| (50, 1 + i % 7)).collect();
        let (got, computed) = run(&spec, 6399);
        assert!(
            (3_000..=4_000).contains(&computed),
            "{computed} blocks computed; 3,715 expected"
        );
        // And the skipped blocks do not matter: the spec's DP, in full.
        let tokens: Vec<i64> = spec.iter().map(|r| r.0).collect();
        let values: Vec<i64> = spec.iter().map(|r| r.1).collect();
        let cands: Vec<u32> = (0..200).collect();
        let want = reference::knapsack_values(&tokens, &values, &cands, 6399, 1);
        assert_eq!(got, want);
    }
}
