//! SSE2 (the x86-64 baseline): `Bits32` lanes, whose `f32` max is one
//! instruction, and `i32` lanes with compare-and-blend maxima.

use super::{choice_kernel, fused_kernel, pack_sse};
use crate::slicer::kernel::{b_word, Bits32, Fused};
use std::arch::x86_64::*;

fused_kernel!(sse2_bits32 / sse2_bits32_choice, Bits32, "sse2", 4,
    load: |p: *mut Bits32| _mm_loadu_si128(p as *const __m128i),
    store: |p: *mut Bits32, v| _mm_storeu_si128(p as *mut __m128i, v),
    splat: |v: Bits32| _mm_castps_si128(_mm_set1_ps(v.0)),
    add: |x, y| _mm_add_epi32(x, y),
    max: |x, y| _mm_castps_si128(_mm_max_ps(_mm_castsi128_ps(x), _mm_castsi128_ps(y))),
    gt: |x, y| _mm_castps_si128(_mm_cmpgt_ps(_mm_castsi128_ps(x), _mm_castsi128_ps(y))),
    pack: |m0, m1, m2, m3| pack_sse(m0, m1, m2, m3));

choice_kernel!(sse2_i32_choice, i32, "sse2", 4,
    load: |p: *mut i32| _mm_loadu_si128(p as *const __m128i),
    store: |p: *mut i32, v| _mm_storeu_si128(p as *mut __m128i, v),
    splat: |v| _mm_set1_epi32(v),
    add: |x, y| _mm_add_epi32(x, y),
    max: |x, y| {
        let m = _mm_cmpgt_epi32(x, y);
        _mm_or_si128(_mm_and_si128(m, x), _mm_andnot_si128(m, y))
    },
    gt: |x, y| _mm_cmpgt_epi32(x, y),
    pack: |m0, m1, m2, m3| pack_sse(m0, m1, m2, m3));

/// SSE2 has no 32-bit max: each max is a compare and a blend, so the
/// compares that give the keep bits double as the blends' masks.
#[target_feature(enable = "sse2")]
pub unsafe fn sse2_i32(f: Fused<'_, i32>) {
    let Fused {
        dp,
        pad,
        keep_a,
        keep_b,
        a,
        b,
        blocks,
    } = f;
    let (da, db) = (a.0, b.0);
    let nb = keep_b.len();
    let p = dp.as_mut_ptr();
    // SAFETY: as in `fused_kernel!`: SSE2 is part of the x86-64 baseline,
    // and `f` passed `super::check`, which bounds every cell the loads and
    // stores reach and every keep word written.
    unsafe {
        let (va, vb) = (_mm_set1_epi32(a.1), _mm_set1_epi32(b.1));
        let load = |at: usize| _mm_loadu_si128(p.add(at) as *const __m128i);
        let blend = |m, x, y| _mm_or_si128(_mm_and_si128(m, x), _mm_andnot_si128(m, y));
        for k in blocks.rev() {
            let (mut bits_a, mut bits_b) = (0u64, 0u64);
            for j in (0..16).rev() {
                let at = pad + 64 * k + 4 * j;
                let o = load(at);
                let with_a = _mm_add_epi32(load(at - da), va);
                let gt_a = _mm_cmpgt_epi32(with_a, o);
                let n = blend(gt_a, with_a, o);
                let ob = load(at - db);
                let lower_a = _mm_add_epi32(load(at - da - db), va);
                let n_lower = blend(_mm_cmpgt_epi32(lower_a, ob), lower_a, ob);
                let with_b = _mm_add_epi32(n_lower, vb);
                let gt_b = _mm_cmpgt_epi32(with_b, n);
                _mm_storeu_si128(p.add(at) as *mut __m128i, blend(gt_b, with_b, n));
                bits_a |= (_mm_movemask_ps(_mm_castsi128_ps(gt_a)) as u64) << (4 * j);
                bits_b |= (_mm_movemask_ps(_mm_castsi128_ps(gt_b)) as u64) << (4 * j);
            }
            *keep_a.get_unchecked_mut(k) = bits_a;
            *keep_b.get_unchecked_mut(b_word(nb, k)) = bits_b;
        }
    }
}
