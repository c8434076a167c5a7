//! The KnapsackSlice DP rows, vectorised, with runtime CPU-feature dispatch.
//!
//! One DP row for an item of discretised weight `dw` and value `v` computes,
//! for every cell `w >= dw`, `with = dp[w - dw] + v` and, where
//! `with > dp[w]`, stores `with` and sets keep bit `w`. Walking `w` downwards
//! (spec 001) means `dp[w - dw]` is always the previous row's value, so the
//! row is data-parallel as long as every block is processed from the top
//! down and loads its sources before it stores; all kernels do that.
//!
//! Every kernel writes every keep word of the row (bits below `dw` are 0),
//! so the keep table needs no zeroing and can be reused across calls.
//! `dp` is padded to whole 64-cell words; padding cells above the capacity
//! are computed but never read by a real cell or by reconstruction.
//!
//! This module holds the crate's only `unsafe` outside the FFI layer: the
//! SIMD intrinsics. Each use is bounds-checked up front and every
//! `#[target_feature]` function is only called after the feature was
//! detected at runtime.

use std::ops::Range;
use std::sync::OnceLock;

/// A DP value lane: `i32` when the total value of a problem fits, `i64`
/// otherwise.
pub trait Lane: Copy + Ord + Default + Send + 'static {
    fn sat_add(self, other: Self) -> Self;
    fn wrap_add(self, other: Self) -> Self;
    /// Runs whole 64-cell blocks `blocks` (keep word indices `k`, each with
    /// `64 * k >= dw`, taken top down) with `kernel`.
    fn blocks(
        kernel: Kernel,
        dp: &mut [Self],
        keep: &mut [u64],
        blocks: Range<usize>,
        dw: usize,
        value: Self,
    );
}

impl Lane for i32 {
    fn blocks(
        kernel: Kernel,
        dp: &mut [i32],
        keep: &mut [u64],
        blocks: Range<usize>,
        dw: usize,
        value: i32,
    ) {
        check_blocks(dp, keep, &blocks, dw);
        match kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the kernel's feature was detected; `check_blocks` bounds every access.
            Kernel::Avx512 if kernel.is_supported() => unsafe {
                x86::avx512_i32(dp, keep, blocks, dw, value)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Kernel::Avx2 if kernel.is_supported() => unsafe {
                x86::avx2_i32(dp, keep, blocks, dw, value)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: SSE2 is part of the x86-64 baseline; bounds as above.
            Kernel::Sse2 => unsafe { x86::sse2_i32(dp, keep, blocks, dw, value) },
            _ => portable_blocks(dp, keep, blocks, dw, value),
        }
    }
    #[inline(always)]
    fn sat_add(self, other: Self) -> Self {
        self.saturating_add(other)
    }
    #[inline(always)]
    fn wrap_add(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
}

impl Lane for i64 {
    fn blocks(
        kernel: Kernel,
        dp: &mut [i64],
        keep: &mut [u64],
        blocks: Range<usize>,
        dw: usize,
        value: i64,
    ) {
        check_blocks(dp, keep, &blocks, dw);
        match kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the kernel's feature was detected; `check_blocks` bounds every access.
            Kernel::Avx512 if kernel.is_supported() => unsafe {
                x86::avx512_i64(dp, keep, blocks, dw, value)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Kernel::Avx2 if kernel.is_supported() => unsafe {
                x86::avx2_i64(dp, keep, blocks, dw, value)
            },
            _ => portable_blocks(dp, keep, blocks, dw, value),
        }
    }
    #[inline(always)]
    fn sat_add(self, other: Self) -> Self {
        self.saturating_add(other)
    }
    #[inline(always)]
    fn wrap_add(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
}

/// A DP row implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Plain Rust, 64 cells per step, left to the compiler to vectorise.
    /// The only kernel on targets other than x86-64.
    Portable,
    /// x86-64 baseline (SSE2) intrinsics, i32 lanes; i64 rows use Portable.
    Sse2,
    /// AVX2 intrinsics, i32 and i64 lanes.
    Avx2,
    /// AVX-512F intrinsics, i32 and i64 lanes.
    Avx512,
}

impl Kernel {
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::Sse2 => "sse2",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run the kernel.
    pub fn is_supported(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Sse2 => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The kernels this CPU supports, fastest last.
    pub fn available() -> Vec<Kernel> {
        [Kernel::Portable, Kernel::Sse2, Kernel::Avx2, Kernel::Avx512]
            .into_iter()
            .filter(|k| k.is_supported())
            .collect()
    }

    /// The kernel slice calls use: the fastest supported one, unless the
    /// environment variable `CUPEL_KNAPSACK_KERNEL` names another supported
    /// kernel (`portable`, `sse2`, `avx2`, `avx512`; for tests and
    /// benchmarks). Decided once per process.
    pub fn selected() -> Kernel {
        static SELECTED: OnceLock<Kernel> = OnceLock::new();
        *SELECTED.get_or_init(|| {
            let available = Kernel::available();
            let wanted = std::env::var("CUPEL_KNAPSACK_KERNEL").ok();
            available
                .iter()
                .copied()
                .find(|k| wanted.as_deref() == Some(k.name()))
                .unwrap_or(*available.last().expect("portable is always available"))
        })
    }
}

/// Runs one DP row with `kernel` (which must be supported). With `saturate`
/// the additions saturate (only needed when the total value of the problem
/// overflows the lane type) and the row runs scalar.
pub fn row<T: Lane>(
    kernel: Kernel,
    dp: &mut [T],
    keep: &mut [u64],
    dw: usize,
    value: T,
    saturate: bool,
) {
    assert!(dw >= 1 && dp.len() == keep.len() * 64 && dw < dp.len());
    let k0 = dw / 64;
    keep[..k0].fill(0);
    if saturate {
        keep[k0..].fill(0);
        for w in (dw..dp.len()).rev() {
            let with = dp[w - dw].sat_add(value);
            if with > dp[w] {
                dp[w] = with;
                keep[w >> 6] |= 1 << (w & 63);
            }
        }
        return;
    }
    // Whole words above the one holding `dw`, top down.
    let blocks = k0 + 1..keep.len();
    T::blocks(kernel, dp, keep, blocks, dw, value);
    // The word holding `dw`: cells dw..64*(k0+1), scalar.
    let mut bits = 0u64;
    for w in (dw..64 * (k0 + 1)).rev() {
        let with = dp[w - dw].wrap_add(value);
        if with > dp[w] {
            dp[w] = with;
            bits |= 1 << (w & 63);
        }
    }
    keep[k0] = bits;
}

/// Portable block: 64 cells at `base`, sources copied out before stores.
#[inline(always)]
fn portable_block<T: Lane>(dp: &mut [T], base: usize, dw: usize, value: T) -> u64 {
    let mut src = [T::default(); 64];
    src.copy_from_slice(&dp[base - dw..base - dw + 64]);
    let dst: &mut [T; 64] = (&mut dp[base..base + 64]).try_into().expect("64 cells");
    let mut flags = [0u8; 64];
    for j in 0..64 {
        let with = src[j].wrap_add(value);
        let gt = with > dst[j];
        dst[j] = if gt { with } else { dst[j] };
        flags[j] = gt as u8;
    }
    let mut bits = 0u64;
    for (k, chunk) in flags.chunks_exact(8).enumerate() {
        let b = u64::from_le_bytes(chunk.try_into().expect("8 flags"));
        // Gathers the low bit of each of the 8 bytes into the top byte.
        bits |= (b.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
    }
    bits
}

fn portable_blocks<T: Lane>(
    dp: &mut [T],
    keep: &mut [u64],
    blocks: Range<usize>,
    dw: usize,
    value: T,
) {
    for k in blocks.rev() {
        keep[k] = portable_block(dp, 64 * k, dw, value);
    }
}

/// The bounds every block kernel relies on; checked before any intrinsic.
fn check_blocks<T>(dp: &[T], keep: &[u64], blocks: &Range<usize>, dw: usize) {
    assert!(blocks.is_empty() || (64 * blocks.start >= dw && dw >= 1));
    assert!(blocks.end <= keep.len() && dp.len() >= 64 * blocks.end);
}

/// The x86-64 kernels. Each processes block `k` (cells `64k..64k+64`) with
/// its vectors from the top down, loading a vector's sources (cells
/// `dw` lower) before storing it, so no source is read after it was updated.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::ops::Range;

    #[target_feature(enable = "avx512f")]
    pub unsafe fn avx512_i32(
        dp: &mut [i32],
        keep: &mut [u64],
        blocks: Range<usize>,
        dw: usize,
        value: i32,
    ) {
        let p = dp.as_mut_ptr();
        let vv = _mm512_set1_epi32(value);
        for k in blocks.rev() {
            let mut bits = 0u64;
            for j in (0..4).rev() {
                let at = 64 * k + 16 * j;
                let src = _mm512_loadu_si512(p.add(at - dw) as *const _);
                let old = _mm512_loadu_si512(p.add(at) as *const _);
                let with = _mm512_add_epi32(src, vv);
                let gt = _mm512_cmpgt_epi32_mask(with, old);
                _mm512_storeu_si512(p.add(at) as *mut _, _mm512_max_epi32(with, old));
                bits |= (gt as u64) << (16 * j);
            }
            *keep.get_unchecked_mut(k) = bits;
        }
    }

    #[target_feature(enable = "avx512f")]
    pub unsafe fn avx512_i64(
        dp: &mut [i64],
        keep: &mut [u64],
        blocks: Range<usize>,
        dw: usize,
        value: i64,
    ) {
        let p = dp.as_mut_ptr();
        let vv = _mm512_set1_epi64(value);
        for k in blocks.rev() {
            let mut bits = 0u64;
            for j in (0..8).rev() {
                let at = 64 * k + 8 * j;
                let src = _mm512_loadu_si512(p.add(at - dw) as *const _);
                let old = _mm512_loadu_si512(p.add(at) as *const _);
                let with = _mm512_add_epi64(src, vv);
                let gt = _mm512_cmpgt_epi64_mask(with, old);
                _mm512_storeu_si512(p.add(at) as *mut _, _mm512_max_epi64(with, old));
                bits |= (gt as u64) << (8 * j);
            }
            *keep.get_unchecked_mut(k) = bits;
        }
    }

    #[target_feature(enable = "avx2")]
    pub unsafe fn avx2_i32(
        dp: &mut [i32],
        keep: &mut [u64],
        blocks: Range<usize>,
        dw: usize,
        value: i32,
    ) {
        let p = dp.as_mut_ptr();
        let vv = _mm256_set1_epi32(value);
        for k in blocks.rev() {
            let mut bits = 0u64;
            for j in (0..8).rev() {
                let at = 64 * k + 8 * j;
                let src = _mm256_loadu_si256(p.add(at - dw) as *const __m256i);
                let old = _mm256_loadu_si256(p.add(at) as *const __m256i);
                let with = _mm256_add_epi32(src, vv);
                let gt = _mm256_cmpgt_epi32(with, old);
                _mm256_storeu_si256(p.add(at) as *mut __m256i, _mm256_max_epi32(with, old));
                bits |= (_mm256_movemask_ps(_mm256_castsi256_ps(gt)) as u32 as u64) << (8 * j);
            }
            *keep.get_unchecked_mut(k) = bits;
        }
    }

    #[target_feature(enable = "avx2")]
    pub unsafe fn avx2_i64(
        dp: &mut [i64],
        keep: &mut [u64],
        blocks: Range<usize>,
        dw: usize,
        value: i64,
    ) {
        let p = dp.as_mut_ptr();
        let vv = _mm256_set1_epi64x(value);
        for k in blocks.rev() {
            let mut bits = 0u64;
            for j in (0..16).rev() {
                let at = 64 * k + 4 * j;
                let src = _mm256_loadu_si256(p.add(at - dw) as *const __m256i);
                let old = _mm256_loadu_si256(p.add(at) as *const __m256i);
                let with = _mm256_add_epi64(src, vv);
                let gt = _mm256_cmpgt_epi64(with, old);
                _mm256_storeu_si256(p.add(at) as *mut __m256i, _mm256_blendv_epi8(old, with, gt));
                bits |= (_mm256_movemask_pd(_mm256_castsi256_pd(gt)) as u32 as u64) << (4 * j);
            }
            *keep.get_unchecked_mut(k) = bits;
        }
    }

    #[target_feature(enable = "sse2")]
    pub unsafe fn sse2_i32(
        dp: &mut [i32],
        keep: &mut [u64],
        blocks: Range<usize>,
        dw: usize,
        value: i32,
    ) {
        let p = dp.as_mut_ptr();
        let vv = _mm_set1_epi32(value);
        for k in blocks.rev() {
            let mut bits = 0u64;
            for j in (0..16).rev() {
                let at = 64 * k + 4 * j;
                let src = _mm_loadu_si128(p.add(at - dw) as *const __m128i);
                let old = _mm_loadu_si128(p.add(at) as *const __m128i);
                let with = _mm_add_epi32(src, vv);
                let gt = _mm_cmpgt_epi32(with, old);
                let new = _mm_or_si128(_mm_and_si128(gt, with), _mm_andnot_si128(gt, old));
                _mm_storeu_si128(p.add(at) as *mut __m128i, new);
                bits |= (_mm_movemask_ps(_mm_castsi128_ps(gt)) as u32 as u64) << (4 * j);
            }
            *keep.get_unchecked_mut(k) = bits;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's scalar row, the oracle for every kernel.
    fn reference_row(dp: &mut [i64], keep: &mut [u64], dw: usize, value: i64) {
        keep.fill(0);
        for w in (dw..dp.len()).rev() {
            let with = dp[w - dw].saturating_add(value);
            if with > dp[w] {
                dp[w] = with;
                keep[w >> 6] |= 1 << (w & 63);
            }
        }
    }

    fn check_kernel<T: Lane + TryFrom<i64> + Into<i64> + std::fmt::Debug>(
        kernel: Kernel,
        seed: u64,
        max_value: i64,
    ) {
        let mut s = seed;
        let mut next = |n: u64| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) % n
        };
        for _ in 0..200 {
            let words = 1 + next(6) as usize;
            let cells = words * 64;
            let mut want_dp = vec![0i64; cells];
            let mut got_dp = vec![T::default(); cells];
            let mut want_keep = vec![0u64; words];
            let mut got_keep = vec![u64::MAX; words];
            for _ in 0..1 + next(12) {
                let dw = 1 + next(cells as u64 - 1) as usize;
                let value = next(max_value as u64) as i64;
                reference_row(&mut want_dp, &mut want_keep, dw, value);
                let v = T::try_from(value).ok().expect("value fits");
                row(kernel, &mut got_dp, &mut got_keep, dw, v, false);
                let got: Vec<i64> = got_dp.iter().map(|&x| x.into()).collect();
                assert_eq!(got, want_dp, "{kernel:?} dp, dw {dw}");
                assert_eq!(got_keep, want_keep, "{kernel:?} keep, dw {dw}");
            }
        }
    }

    #[test]
    fn every_available_kernel_matches_the_scalar_row() {
        let kernels = Kernel::available();
        assert!(kernels.contains(&Kernel::Portable));
        for (i, &k) in kernels.iter().enumerate() {
            check_kernel::<i32>(k, i as u64, 10_000_000);
            check_kernel::<i64>(k, 100 + i as u64, 1 << 50);
        }
    }

    #[test]
    fn saturating_rows_match_the_scalar_row() {
        let mut want_dp = vec![0i64; 128];
        let mut got_dp = vec![0i64; 128];
        let mut want_keep = vec![0u64; 2];
        let mut got_keep = vec![7u64; 2];
        for (dw, value) in [(3, i64::MAX), (5, i64::MAX - 1), (70, 12), (1, i64::MAX)] {
            reference_row(&mut want_dp, &mut want_keep, dw, value);
            row(
                Kernel::selected(),
                &mut got_dp,
                &mut got_keep,
                dw,
                value,
                true,
            );
            assert_eq!((&got_dp, &got_keep), (&want_dp, &want_keep), "dw {dw}");
        }
    }

    #[test]
    fn selected_kernel_is_supported() {
        assert!(Kernel::selected().is_supported());
        assert_eq!(
            Kernel::available().last().map(|k| k.is_supported()),
            Some(true)
        );
    }
}
