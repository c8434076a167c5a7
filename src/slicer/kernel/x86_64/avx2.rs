//! AVX2: `i32` and `i64` lanes.

use super::{fused_kernel, join};
use crate::slicer::kernel::{b_word, Fused};
use std::arch::x86_64::*;

fused_kernel!(avx2_i32 / avx2_i32_choice, i32, "avx2", 8,
    load: |p: *mut i32| _mm256_loadu_si256(p as *const __m256i),
    store: |p: *mut i32, v| _mm256_storeu_si256(p as *mut __m256i, v),
    splat: |v| _mm256_set1_epi32(v),
    add: |x, y| _mm256_add_epi32(x, y),
    max: |x, y| _mm256_max_epi32(x, y),
    gt: |x, y| _mm256_cmpgt_epi32(x, y),
    pack: |m0, m1, m2, m3| pack_avx2(m0, m1, m2, m3));

fused_kernel!(avx2_i64 / avx2_i64_choice, i64, "avx2", 4,
    load: |p: *mut i64| _mm256_loadu_si256(p as *const __m256i),
    store: |p: *mut i64, v| _mm256_storeu_si256(p as *mut __m256i, v),
    splat: |v| _mm256_set1_epi64x(v),
    add: |x, y| _mm256_add_epi64(x, y),
    max: |x, y| { let gt = _mm256_cmpgt_epi64(x, y); _mm256_blendv_epi8(y, x, gt) },
    gt: |x, y| _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(x, y))) as u64,
    pack: |m0, m1, m2, m3| join(4, [m0, m1, m2, m3]));

/// Packs four AVX2 masks (all-ones or zero 32-bit lanes) into 32 bits;
/// the packs work within 128-bit halves, the permute restores cell order.
#[inline]
#[target_feature(enable = "avx2")]
fn pack_avx2(m0: __m256i, m1: __m256i, m2: __m256i, m3: __m256i) -> u64 {
    let bytes = _mm256_packs_epi16(_mm256_packs_epi32(m0, m1), _mm256_packs_epi32(m2, m3));
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    _mm256_movemask_epi8(_mm256_permutevar8x32_epi32(bytes, order)) as u32 as u64
}
