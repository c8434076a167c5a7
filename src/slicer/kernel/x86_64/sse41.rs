//! SSE4.1: a 32-bit integer max (`pmaxsd`), `i32` lanes.

use super::{fused_kernel, pack_sse};
use crate::slicer::kernel::{b_word, Fused};
use std::arch::x86_64::*;

fused_kernel!(sse41_i32 / sse41_i32_choice, i32, "sse4.1", 4,
    load: |p: *mut i32| _mm_loadu_si128(p as *const __m128i),
    store: |p: *mut i32, v| _mm_storeu_si128(p as *mut __m128i, v),
    splat: |v| _mm_set1_epi32(v),
    add: |x, y| _mm_add_epi32(x, y),
    max: |x, y| _mm_max_epi32(x, y),
    gt: |x, y| _mm_cmpgt_epi32(x, y),
    pack: |m0, m1, m2, m3| pack_sse(m0, m1, m2, m3));
