//! AVX-512F: `i32` and `i64` lanes, keep bits straight from mask registers.

use super::{fused_kernel, join};
use crate::slicer::kernel::{b_word, Fused};
use std::arch::x86_64::*;

fused_kernel!(avx512_i32 / avx512_i32_choice, i32, "avx512f", 16,
    load: |p: *mut i32| _mm512_loadu_si512(p as *const _),
    store: |p: *mut i32, v| _mm512_storeu_si512(p as *mut _, v),
    splat: |v| _mm512_set1_epi32(v),
    add: |x, y| _mm512_add_epi32(x, y),
    max: |x, y| _mm512_max_epi32(x, y),
    gt: |x, y| _mm512_cmpgt_epi32_mask(x, y) as u64,
    pack: |m0, m1, m2, m3| join(16, [m0, m1, m2, m3]));

fused_kernel!(avx512_i64 / avx512_i64_choice, i64, "avx512f", 8,
    load: |p: *mut i64| _mm512_loadu_si512(p as *const _),
    store: |p: *mut i64, v| _mm512_storeu_si512(p as *mut _, v),
    splat: |v| _mm512_set1_epi64(v),
    add: |x, y| _mm512_add_epi64(x, y),
    max: |x, y| _mm512_max_epi64(x, y),
    gt: |x, y| _mm512_cmpgt_epi64_mask(x, y) as u64,
    pack: |m0, m1, m2, m3| join(8, [m0, m1, m2, m3]));
