//! The x86-64 kernels: the portable loop with explicit vectors, processing
//! each block's vectors from the top down; one file per instruction set.
//!
//! Every function here is `unsafe`: it must run on a CPU with its feature
//! (the dispatch in `super` checks) and on a [`Fused`] that passed
//! `super::check` (which bounds every index the pointers reach).

mod avx2;
mod avx512;
mod sse2;
mod sse41;

pub use avx2::{avx2_i32, avx2_i32_choice, avx2_i64, avx2_i64_choice};
pub use avx512::{avx512_i32, avx512_i32_choice, avx512_i64, avx512_i64_choice};
pub use sse2::{sse2_bits32, sse2_bits32_choice, sse2_i32, sse2_i32_choice};
pub use sse41::{sse41_i32, sse41_i32_choice};

use std::arch::x86_64::*;

/// Defines a fused kernel over vectors of `$lanes` cells: per vector at
/// `at`, loads o, o[-da], o[-db], o[-da-db], stores the new cells and
/// makes the two keep masks with `$gt`; `$pack` turns the masks of four
/// vectors into their `4 * $lanes` keep bits (packs and one byte
/// movemask where there are no mask registers, rather than a movemask,
/// shift and or per vector).
macro_rules! fused_kernel {
    (
        $name:ident / $choice:ident, $t:ty, $feature:literal, $lanes:expr,
        load: $load:expr, store: $store:expr, splat: $splat:expr,
        add: $add:expr, max: $max:expr, gt: $gt:expr, pack: $pack:expr
    ) => {
        $crate::slicer::kernel::x86_64::choice_kernel!($choice, $t, $feature, $lanes,
            load: $load, store: $store, splat: $splat, add: $add, max: $max, gt: $gt,
            pack: $pack);

        #[target_feature(enable = $feature)]
        pub unsafe fn $name(f: Fused<'_, $t>) {
            let Fused {
                dp,
                pad,
                keep_a,
                keep_b,
                a,
                b,
                blocks,
            } = f;
            let (da, va) = a;
            let (db, vb) = b;
            let nb = keep_b.len();
            let p = dp.as_mut_ptr();
            // SAFETY: this runs on a CPU with the feature (the caller's
            // promise), and `f` passed `super::check`: for every block `k`
            // the cells `at - da - db .. at + 4 * lanes` the loads and
            // stores reach lie inside `dp`, `k < keep_a.len()`, and
            // `b_word` indexes `keep_b`.
            unsafe {
                let (va, vb) = ($splat(va), $splat(vb));
                // One vector at `at`: stores the new cells, returns the masks.
                let step = |at: usize| {
                    let o = $load(p.add(at));
                    let with_a = $add($load(p.add(at - da)), va);
                    let n = $max(o, with_a);
                    let n_lower = $max($load(p.add(at - db)), $add($load(p.add(at - da - db)), va));
                    let with_b = $add(n_lower, vb);
                    $store(p.add(at), $max(n, with_b));
                    ($gt(with_a, o), $gt(with_b, n))
                };
                for k in blocks.rev() {
                    let (mut bits_a, mut bits_b) = (0u64, 0u64);
                    for g in (0..64 / (4 * $lanes)).rev() {
                        let at = pad + 64 * k + 4 * $lanes * g;
                        let (a3, b3) = step(at + 3 * $lanes);
                        let (a2, b2) = step(at + 2 * $lanes);
                        let (a1, b1) = step(at + $lanes);
                        let (a0, b0) = step(at);
                        bits_a |= $pack(a0, a1, a2, a3) << (4 * $lanes * g);
                        bits_b |= $pack(b0, b1, b2, b3) << (4 * $lanes * g);
                    }
                    *keep_a.get_unchecked_mut(k) = bits_a;
                    *keep_b.get_unchecked_mut(b_word(nb, k)) = bits_b;
                }
            }
        }
    };
}

pub(crate) use fused_kernel;

/// Defines a multiple-choice kernel (`super::Choice`) over vectors of
/// `$lanes` cells with the operations of [`fused_kernel!`]: per vector, top
/// down, the running maximum over the options in order, each option's keep
/// bits from its comparison with that maximum (one vector's worth of bits
/// taken from `$pack` of the mask repeated).
macro_rules! choice_kernel {
    (
        $name:ident, $t:ty, $feature:literal, $lanes:expr,
        load: $load:expr, store: $store:expr, splat: $splat:expr,
        add: $add:expr, max: $max:expr, gt: $gt:expr, pack: $pack:expr
    ) => {
        #[target_feature(enable = $feature)]
        pub unsafe fn $name(c: $crate::slicer::kernel::Choice<'_, $t>) {
            use $crate::slicer::kernel::{Choice, MAX_OPTIONS};
            /// `N` options, known when compiled: as the loop below, four
            /// vectors at a time with each option's bits packed at once,
            /// as in the fused kernel.
            #[target_feature(enable = $feature)]
            unsafe fn fixed<const N: usize>(c: Choice<'_, $t>) {
                let Choice {
                    dp,
                    pad,
                    keep,
                    words,
                    opts,
                    blocks,
                } = c;
                let p = dp.as_mut_ptr();
                // SAFETY: as below (`opts` has `N` options).
                unsafe {
                    let ds: [usize; N] = core::array::from_fn(|j| opts.get_unchecked(j).0);
                    let vs: [_; N] = core::array::from_fn(|j| $splat(opts.get_unchecked(j).1));
                    // One vector at `at`: stores the new cells, returns each
                    // option's mask (the running maximum over the options in
                    // order, as below).
                    let step = |at: usize| {
                        let mut cur = $load(p.add(at));
                        let masks: [_; N] = core::array::from_fn(|j| {
                            let with = $add($load(p.add(at - ds[j])), vs[j]);
                            let m = $gt(with, cur);
                            cur = $max(cur, with);
                            m
                        });
                        $store(p.add(at), cur);
                        masks
                    };
                    for k in blocks.rev() {
                        let mut bits = [0u64; N];
                        for g in (0..64 / (4 * $lanes)).rev() {
                            let at = pad + 64 * k + 4 * $lanes * g;
                            let m3 = step(at + 3 * $lanes);
                            let m2 = step(at + 2 * $lanes);
                            let m1 = step(at + $lanes);
                            let m0 = step(at);
                            for j in 0..N {
                                bits[j] |= $pack(m0[j], m1[j], m2[j], m3[j]) << (4 * $lanes * g);
                            }
                        }
                        for j in 0..N {
                            *keep.get_unchecked_mut(j * words + k) = bits[j];
                        }
                    }
                }
            }
            match c.opts.len() {
                // SAFETY: as below; `fixed` touches what this loop does.
                2 => return unsafe { fixed::<2>(c) },
                // SAFETY: as below; `fixed` touches what this loop does.
                3 => return unsafe { fixed::<3>(c) },
                _ => {}
            }
            let Choice {
                dp,
                pad,
                keep,
                words,
                opts,
                blocks,
            } = c;
            let n = opts.len();
            let p = dp.as_mut_ptr();
            const LOW: u64 = (1u64 << $lanes) - 1;
            // SAFETY: this runs on a CPU with the feature (the caller's
            // promise), and `c` passed `super::check_choice`: every weight
            // is in `1..=pad`, so for every block `k < words` the cells
            // `at - d .. at + lanes` the loads and stores reach lie inside
            // `dp`; `n <= MAX_OPTIONS` and `keep` has `n * words` words.
            unsafe {
                let mut bits = [0u64; MAX_OPTIONS];
                const TOP: usize = 64 / $lanes - 1;
                for k in blocks.rev() {
                    for g in (0..=TOP).rev() {
                        let at = pad + 64 * k + $lanes * g;
                        let mut cur = $load(p.add(at));
                        for j in 0..n {
                            let (d, v) = *opts.get_unchecked(j);
                            let with = $add($load(p.add(at - d)), $splat(v));
                            let m = $gt(with, cur);
                            cur = $max(cur, with);
                            // The block's first vector starts each word afresh.
                            let word = bits.get_unchecked_mut(j);
                            let before = if g == TOP { 0 } else { *word };
                            *word = before | (($pack(m, m, m, m) & LOW) << ($lanes * g));
                        }
                        $store(p.add(at), cur);
                    }
                    for j in 0..n {
                        *keep.get_unchecked_mut(j * words + k) = *bits.get_unchecked(j);
                    }
                }
            }
        }
    };
}

pub(crate) use choice_kernel;

/// Packs four SSE masks (all-ones or zero 32-bit lanes) into 16 bits.
#[inline]
#[target_feature(enable = "sse2")]
fn pack_sse(m0: __m128i, m1: __m128i, m2: __m128i, m3: __m128i) -> u64 {
    let bytes = _mm_packs_epi16(_mm_packs_epi32(m0, m1), _mm_packs_epi32(m2, m3));
    _mm_movemask_epi8(bytes) as u32 as u64 & 0xFFFF
}

/// Joins four masks of `bits` bits each, first one lowest (disjoint bit
/// ranges: the sum is the bitwise or).
#[inline(always)]
fn join(bits: u32, m: [u64; 4]) -> u64 {
    m[0] + (m[1] << bits) + (m[2] << (2 * bits)) + (m[3] << (3 * bits))
}
