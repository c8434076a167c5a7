//! KNAPSACK-SLICE of spec 001 exactly as written, for small problems: every
//! positive-token candidate a DP row (value 0 and over-capacity ones
//! included), a full table of keep flags, no filter, no skipped regions,
//! no vectors. The oracle of the unit tests, the differential tests and the
//! fuzz driver; not used by the library itself.

use super::{ceil_div, scaled_value};

/// The spec's result for candidates `cands` (item indices into `tokens` /
/// `scores`, in the order the slicer receives them), `target` tokens and
/// `bucket` tokens per bucket: zero-token candidates in order, then the
/// reconstruction order. Allocates `target / bucket` cells per candidate.
pub fn knapsack(
    tokens: &[i64],
    scores: &[f64],
    cands: &[u32],
    target: i64,
    bucket: i64,
) -> Vec<u32> {
    let values: Vec<i64> = scores.iter().map(|&s| scaled_value(s)).collect();
    knapsack_values(tokens, &values, cands, target, bucket)
}

/// [`knapsack`] with each candidate's integer value given (`values`, by
/// index) rather than computed from a score: the spec's DP for any rows,
/// e.g. the units of a grouped list.
pub fn knapsack_values(
    tokens: &[i64],
    values: &[i64],
    cands: &[u32],
    target: i64,
    bucket: i64,
) -> Vec<u32> {
    // Step 1: zero-token items are always included; negative ones never.
    let mut result: Vec<u32> = cands
        .iter()
        .copied()
        .filter(|&i| tokens[i as usize] == 0)
        .collect();
    if cands.is_empty() || target <= 0 {
        return Vec::new();
    }
    let rows: Vec<u32> = cands
        .iter()
        .copied()
        .filter(|&i| tokens[i as usize] > 0)
        .collect();
    // Steps 2-3: integer values, discretised weights and capacity.
    let capacity = (target / bucket) as usize;
    let weight = |i: u32| ceil_div(tokens[i as usize], bucket);
    // Step 4: DP over w from the top down, keep[r][w] when row r improves w.
    let mut dp = vec![0i64; capacity + 1];
    let mut keep = vec![vec![false; capacity + 1]; rows.len()];
    for (r, &i) in rows.iter().enumerate() {
        let (d, v) = (weight(i), values[i as usize]);
        if d > capacity as i64 {
            continue;
        }
        for w in (d as usize..=capacity).rev() {
            let with = dp[w - d as usize].saturating_add(v);
            if with > dp[w] {
                dp[w] = with;
                keep[r][w] = true;
            }
        }
    }
    // Step 5: reconstruction from the last row down; step 6: zero-token
    // items first, then these.
    let mut w = capacity;
    for r in (0..rows.len()).rev() {
        if keep[r][w] {
            result.push(rows[r]);
            w -= weight(rows[r]) as usize;
        }
    }
    result
}
