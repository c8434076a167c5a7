//! The Sort stage (supplement 2): score descending, stable on input index.
//! Also the packed-key helpers the slicers use for their own orderings.

use crate::items::Items;

/// Maps an f64 to a u64 whose unsigned order is the float order
/// (for non-NaN values; -0.0 must be normalised to +0.0 by the caller).
#[inline]
pub fn ordered_bits(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

/// The u64 key that sorts ascending as `value` descending (-0.0 = 0.0).
#[inline]
pub fn desc_bits(value: f64) -> u64 {
    !ordered_bits(value + 0.0)
}

/// A key that sorts ascending as (value descending, position ascending).
#[inline]
pub fn desc_key(value: f64, position: u32) -> u128 {
    ((desc_bits(value) as u128) << 32) | position as u128
}

/// The position encoded in a [`desc_key`].
#[inline]
pub fn key_position(key: u128) -> u32 {
    key as u32
}

/// Sorts `(key, payload)` pairs by key ascending, stably: equal keys keep
/// their order. LSD radix sort, 11-bit digits, O(N) with one scratch buffer;
/// digits in which all keys agree are skipped.
pub fn radix_sort(pairs: &mut Vec<(u64, u32)>) {
    const BITS: u32 = 8;
    const DIGITS: usize = 64usize.div_ceil(BITS as usize);
    const BUCKETS: usize = 1 << BITS;
    if pairs.len() < 64 {
        // Small inputs: a stable comparison sort is faster than 6 passes.
        pairs.sort_by_key(|p| p.0);
        return;
    }
    let mut counts = vec![[0usize; BUCKETS]; DIGITS];
    for &(k, _) in pairs.iter() {
        for (d, c) in counts.iter_mut().enumerate() {
            c[((k >> (BITS as usize * d)) as usize) & (BUCKETS - 1)] += 1;
        }
    }
    let mut other = vec![(0u64, 0u32); pairs.len()];
    for (d, c) in counts.iter_mut().enumerate() {
        if c.contains(&pairs.len()) {
            continue; // every key has the same digit here
        }
        let mut sum = 0;
        for n in c.iter_mut() {
            let here = *n;
            *n = sum;
            sum += here;
        }
        let shift = BITS as usize * d;
        for &p in pairs.iter() {
            let b = ((p.0 >> shift) as usize) & (BUCKETS - 1);
            other[c[b]] = p;
            c[b] += 1;
        }
        std::mem::swap(pairs, &mut other);
    }
}

/// Orders `positions` of `values` by value descending, then position ascending.
pub fn by_value_desc(values: impl Iterator<Item = f64>) -> Vec<u32> {
    let mut pairs: Vec<(u64, u32)> = values
        .enumerate()
        .map(|(i, v)| (desc_bits(v), i as u32))
        .collect();
    radix_sort(&mut pairs);
    pairs.into_iter().map(|p| p.1).collect()
}

/// The Sort stage: item indices by score descending, ties in push order.
pub fn sort_stage(items: &Items) -> Vec<u32> {
    by_value_desc(items.scores().iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::NewItem;

    #[test]
    fn ordered_bits_preserves_order() {
        let v = [f64::MIN, -1.0, -1e-300, 0.0, 1e-300, 0.5, 1.0, f64::MAX];
        for w in v.windows(2) {
            assert!(ordered_bits(w[0]) < ordered_bits(w[1]), "{:?}", w);
        }
    }

    #[test]
    fn sort_is_score_desc_then_push_order() {
        let mut items = Items::new();
        for s in [0.5, 0.9, 0.5, -0.0, 0.0, 0.9, -3.0] {
            items
                .push(NewItem {
                    tokens: 1,
                    score: s,
                    kind: None,
                })
                .unwrap();
        }
        assert_eq!(sort_stage(&items), vec![1, 5, 0, 2, 3, 4, 6]);
    }

    #[test]
    fn radix_sort_is_a_stable_sort() {
        let mut seed = 7u64;
        for n in [0usize, 1, 63, 64, 65, 1000, 20_000] {
            for spread in [1u64, 3, 1 << 20, u64::MAX] {
                let mut pairs: Vec<(u64, u32)> = (0..n as u32)
                    .map(|i| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let k = (seed >> 7) % spread.max(1);
                        // Spread some keys into the high digits too.
                        (
                            if spread == u64::MAX {
                                seed
                            } else {
                                k << (i % 3 * 20)
                            },
                            i,
                        )
                    })
                    .collect();
                let mut want = pairs.clone();
                want.sort_by_key(|p| p.0); // stable
                radix_sort(&mut pairs);
                assert_eq!(pairs, want, "n {n} spread {spread}");
            }
        }
    }
}
