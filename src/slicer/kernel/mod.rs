//! The KnapsackSlice DP rows, vectorised, with runtime CPU-feature dispatch.
//!
//! One DP row for an item of discretised weight `d` and value `v` computes,
//! for every cell `w >= d`, `with = dp[w - d] + v` and, where
//! `with > dp[w]`, stores `with` and sets keep bit `w`. Walking `w` downwards
//! (spec 001) means `dp[w - d]` is always the previous row's value, so a row
//! is data-parallel as long as cells are processed from the top down and
//! every vector loads its sources before it stores.
//!
//! The kernels fuse two rows `a` and `b` per pass: with `o` the values before
//! both rows, `n[w] = max(o[w], o[w - da] + va)` and the result is
//! `max(n[w], n[w - db] + vb)`, where `n[w - db]` is recomputed from `o`.
//! One pass over the DP array instead of two halves its memory traffic,
//! which bounds the speed once the array leaves L1.
//!
//! `dp` has [`pad`] cells below cell 0 at [`Lane::FLOOR`], so every source
//! index stays inside the array and cells below `d` never improve (their
//! keep bits come out 0 without a scalar edge case). Padding cells above the
//! capacity are computed but never read by a real cell or by reconstruction.
//! Every keep word of both rows is written, so the keep table needs no
//! zeroing and can be reused across calls.
//!
//! Laid out like memchr's `arch/`: this file has the lane trait, the
//! shared bounds check and the dispatch (chosen once per process,
//! [`Kernel::selected`]); [`portable`] is the plain-Rust kernel, the
//! readable one and the only one on targets other than x86-64; `x86_64/`
//! has one file per instruction set. [`Bits32`] is the lane type of the
//! SSE2 and portable kernels on x86-64.
//!
//! The x86-64 files hold the crate's only `unsafe` outside the FFI layer:
//! the SIMD intrinsics. Every index they touch is bounds-checked up front
//! by [`check`], and every `#[target_feature]` function is only called
//! after its feature was detected at runtime.

mod bits32;
mod portable;
#[cfg(target_arch = "x86_64")]
mod x86_64;

pub use bits32::{Bits32, BITS32_MAX_TOTAL};

use std::ops::Range;
use std::sync::OnceLock;

/// A DP value lane: `i32` when the total value of a problem fits, `i64`
/// otherwise; [`Bits32`] (`i32` values with an `f32` max) for the SSE2 and
/// portable kernels on x86-64. Values in a DP array are `>= 0` except the
/// padding.
pub trait Lane: Copy + PartialOrd + Default + Send + 'static {
    /// The padding value: adding any value in `0..=MAX` (or two whose sum
    /// fits) gives a negative number, never a DP improvement.
    const FLOOR: Self;
    fn wrap_add(self, other: Self) -> Self;
    /// The larger of two values (no NaN ever occurs). Written as the
    /// opposite comparison of the kernels' keep bits (`with > old`), so the
    /// compiler keeps a max instruction (`maxps` for [`Bits32`]) instead of
    /// sharing the comparison and blending.
    #[inline(always)]
    fn lmax(self, other: Self) -> Self {
        if self > other {
            self
        } else {
            other
        }
    }
    /// Runs blocks `blocks` of the fused rows `a` and `b` with `kernel`.
    fn fused(kernel: Kernel, f: Fused<'_, Self>);
    /// Runs blocks `blocks` of the multiple-choice row `c` with `kernel`.
    fn choice(kernel: Kernel, c: Choice<'_, Self>);
}

/// The most options one multiple-choice row takes: an item and its 255
/// variants.
pub const MAX_OPTIONS: usize = 256;

/// One multiple-choice row (the options of one class, at most one of which
/// is taken) to run in one pass over `dp`: for every cell `w`, top down,
/// `dp[w] = max(dp[w], dp[w - d_j] + v_j)` over the options `j` in order,
/// all sources read before the cell is stored (so each is the value before
/// the row); option `j`'s keep bit is set where it is strictly above the
/// running maximum of `dp[w]` and the options before it. So the last
/// option whose bit is set at `w` is the one the cell's value came from.
pub struct Choice<'a, T> {
    pub dp: &'a mut [T],
    /// Cells of padding: cell `w` is `dp[pad + w]`.
    pub pad: usize,
    /// `opts.len()` rows of `words` keep words, option by option.
    pub keep: &'a mut [u64],
    pub words: usize,
    /// (weight in cells >= 1, value >= 0) of each option.
    pub opts: &'a [(usize, T)],
    /// Keep word indices to compute, top down.
    pub blocks: Range<usize>,
}

/// Two rows to run in one pass over `dp`.
pub struct Fused<'a, T> {
    pub dp: &'a mut [T],
    /// Cells of padding: cell `w` is `dp[pad + w]`.
    pub pad: usize,
    pub keep_a: &'a mut [u64],
    pub keep_b: &'a mut [u64],
    pub a: (usize, T),
    pub b: (usize, T),
    /// Keep word indices to compute, top down.
    pub blocks: Range<usize>,
}

macro_rules! lane {
    ($t:ty, $($kernel:ident => $f:ident / $c:ident),*) => {
        impl Lane for $t {
            const FLOOR: $t = <$t>::MIN;
            #[inline(always)]
            fn wrap_add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            fn fused(kernel: Kernel, f: Fused<'_, $t>) {
                check(&f);
                match kernel {
                    $(
                        #[cfg(target_arch = "x86_64")]
                        // SAFETY: the kernel's CPU feature was detected and
                        // `check` bounded every index the kernel touches.
                        Kernel::$kernel if kernel.is_supported() => unsafe { x86_64::$f(f) },
                    )*
                    _ => portable::fused(f),
                }
            }
            fn choice(kernel: Kernel, c: Choice<'_, $t>) {
                check_choice(&c);
                match kernel {
                    $(
                        #[cfg(target_arch = "x86_64")]
                        // SAFETY: the kernel's CPU feature was detected and
                        // `check_choice` bounded every index it touches.
                        Kernel::$kernel if kernel.is_supported() => unsafe { x86_64::$c(c) },
                    )*
                    _ => portable::choice(c),
                }
            }
        }
    };
}

lane!(i32, Avx512 => avx512_i32 / avx512_i32_choice, Avx2 => avx2_i32 / avx2_i32_choice,
    Sse41 => sse41_i32 / sse41_i32_choice, Sse2 => sse2_i32 / sse2_i32_choice);
lane!(i64, Avx512 => avx512_i64 / avx512_i64_choice, Avx2 => avx2_i64 / avx2_i64_choice);

/// Whether a problem of total value `total` runs in [`Bits32`] lanes with
/// `kernel`: the x86-64 kernels without a 32-bit integer max. (On other
/// targets the portable kernel's `i32` max is one instruction.)
pub fn use_bits32(kernel: Kernel, total: i64) -> bool {
    cfg!(target_arch = "x86_64")
        && matches!(kernel, Kernel::Sse2 | Kernel::Portable)
        && (0..=BITS32_MAX_TOTAL).contains(&total)
}

/// A DP row implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Plain Rust, 64 cells per step, left to the compiler to vectorise
    /// ([`Bits32`] lanes on x86-64). The only kernel on targets other than
    /// x86-64.
    Portable,
    /// x86-64 baseline (SSE2) intrinsics, [`Bits32`] lanes (or i32 for a
    /// total value beyond them); i64 rows run Portable.
    Sse2,
    /// SSE4.1 intrinsics (32-bit max), i32 lanes; i64 rows run Portable.
    Sse41,
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
            Kernel::Sse41 => "sse4.1",
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
            Kernel::Sse41 => std::arch::is_x86_feature_detected!("sse4.1"),
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
        [
            Kernel::Portable,
            Kernel::Sse2,
            Kernel::Sse41,
            Kernel::Avx2,
            Kernel::Avx512,
        ]
        .into_iter()
        .filter(|k| k.is_supported())
        .collect()
    }

    /// The kernel slice calls use: the fastest supported one, unless the
    /// environment variable `CUPEL_KNAPSACK_KERNEL` names another supported
    /// kernel (`portable`, `sse2`, `sse4.1`, `avx2`, `avx512`; for tests and
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

/// Cells of padding below cell 0 of a DP array whose rows weigh at most
/// `max_weight` cells: enough for the deepest fused source, `w - da - db`,
/// of the lowest block [`rows`] computes.
pub fn pad(max_weight: usize) -> usize {
    64 * (max_weight / 64 + 2)
}

/// The length of a DP array for `words` keep words (`64 * words` cells).
pub fn dp_len(words: usize, max_weight: usize) -> usize {
    pad(max_weight) + 64 * words
}

/// Initialises a DP array of [`dp_len`]: padding at [`Lane::FLOOR`], cells at 0.
pub fn init_dp<T: Lane>(dp: &mut [T], max_weight: usize) {
    let pad = pad(max_weight);
    dp[..pad].fill(T::FLOOR);
    dp[pad..].fill(T::default());
}

/// Runs rows `a` then `b` (weight in cells, at most `max_weight`; value
/// `>= 0`) on `dp` (from [`init_dp`] with `max_weight`), writing every word
/// of `keep_a` and `keep_b`: from block `from` up (the words below are
/// zeroed; a caller that needs no cell below `64 * from` passes it). For a single row pass `b = None`: a value-0 row
/// never improves a cell (the DP array is non-decreasing in `w`), and its
/// keep bits go to a scratch word.
pub fn rows<T: Lane>(
    kernel: Kernel,
    dp: &mut [T],
    max_weight: usize,
    keep_a: &mut [u64],
    a: (usize, T),
    b: Option<(&mut [u64], (usize, T))>,
    from: usize,
) {
    let words = keep_a.len();
    let mut spare = [0u64; 1];
    let (keep_b, b) = match b {
        Some((k, b)) => (k, b),
        None => (&mut spare[..], (1, T::default())),
    };
    assert!(a.0.max(b.0) <= max_weight);
    let lowest = (a.0.min(b.0) / 64).max(from).min(words);
    keep_a[..lowest].fill(0);
    if keep_b.len() == words {
        keep_b[..lowest].fill(0);
    }
    T::fused(
        kernel,
        Fused {
            dp,
            pad: pad(max_weight),
            keep_a,
            keep_b,
            a,
            b,
            blocks: lowest..words,
        },
    );
}

/// Runs the multiple-choice row `opts` (weights in cells, at most
/// `max_weight`; values `>= 0`) on `dp` (from [`init_dp`] with
/// `max_weight`), writing every word of `keep` (`opts.len()` rows of
/// `words`): from block `from` up, the words below zeroed, as [`rows`].
pub fn choice_row<T: Lane>(
    kernel: Kernel,
    dp: &mut [T],
    max_weight: usize,
    keep: &mut [u64],
    words: usize,
    opts: &[(usize, T)],
    from: usize,
) {
    assert!(opts.iter().all(|o| o.0 <= max_weight) && keep.len() == opts.len() * words);
    let lightest = opts.iter().map(|o| o.0).min().unwrap_or(0);
    let lowest = (lightest / 64).max(from).min(words);
    for row in keep.chunks_exact_mut(words) {
        row[..lowest].fill(0);
    }
    T::choice(
        kernel,
        Choice {
            dp,
            pad: pad(max_weight),
            keep,
            words,
            opts,
            blocks: lowest..words,
        },
    );
}

/// [`choice_row`] with saturating additions, scalar, in `i64`: for
/// problems whose total value overflows every lane type.
pub fn choice_row_saturating(
    dp: &mut [i64],
    max_weight: usize,
    keep: &mut [u64],
    words: usize,
    opts: &[(usize, i64)],
) {
    assert!(dp.len() == dp_len(words, max_weight) && keep.len() == opts.len() * words);
    assert!(opts.iter().all(|o| o.0 >= 1 && o.0 <= max_weight));
    let pad = pad(max_weight);
    keep.fill(0);
    for w in (0..64 * words).rev() {
        let mut cur = dp[pad + w];
        for (j, &(d, v)) in opts.iter().enumerate() {
            let with = dp[pad + w - d].saturating_add(v);
            if with > cur {
                cur = with;
                keep[j * words + (w >> 6)] |= 1 << (w & 63);
            }
        }
        dp[pad + w] = cur;
    }
}

/// The bounds every choice kernel relies on; checked before any intrinsic.
pub(super) fn check_choice<T: Lane>(c: &Choice<'_, T>) {
    let n = c.opts.len();
    assert!((1..=MAX_OPTIONS).contains(&n) && c.keep.len() == n * c.words);
    assert!(c.blocks.end <= c.words && c.dp.len() >= c.pad + 64 * c.words);
    for &(d, v) in c.opts {
        assert!((1..=c.pad).contains(&d) && v >= T::default());
    }
}

/// One row with saturating additions, scalar, in `i64`: for problems whose
/// total value overflows every lane type.
pub fn row_saturating(dp: &mut [i64], max_weight: usize, keep: &mut [u64], d: usize, value: i64) {
    let words = keep.len();
    assert!(d >= 1 && d <= max_weight && dp.len() == dp_len(words, max_weight));
    let pad = pad(max_weight);
    keep.fill(0);
    for w in (d..64 * words).rev() {
        let with = dp[pad + w - d].saturating_add(value);
        if with > dp[pad + w] {
            dp[pad + w] = with;
            keep[w >> 6] |= 1 << (w & 63);
        }
    }
}

/// The bounds every fused kernel relies on; checked before any intrinsic.
/// A keep slice of length 1 (the spare word of a single row) is written at
/// index 0 for every block.
pub(super) fn check<T: Lane>(f: &Fused<'_, T>) {
    let words = f.keep_a.len();
    let (da, db) = (f.a.0, f.b.0);
    assert!(da >= 1 && db >= 1 && da < 64 * words && db < 64 * words);
    assert!(f.a.1 >= T::default() && f.b.1 >= T::default());
    assert!(f.keep_b.len() == words || f.keep_b.len() == 1);
    assert!(f.blocks.end <= words && f.dp.len() >= f.pad + 64 * words);
    // The lowest source, cell 64 * start - da - db, must not go below the padding.
    assert!(f.blocks.is_empty() || f.pad + 64 * f.blocks.start >= da + db);
}

/// Keep word `k` of row b (the spare word of a single row is index 0).
#[inline(always)]
pub(super) fn b_word(keep_b_len: usize, k: usize) -> usize {
    if keep_b_len == 1 {
        0
    } else {
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's scalar row, the oracle for every kernel.
    fn reference_row(dp: &mut [i64], keep: &mut [u64], d: usize, value: i64) {
        keep.fill(0);
        for w in (d..dp.len()).rev() {
            let with = dp[w - d].saturating_add(value);
            if with > dp[w] {
                dp[w] = with;
                keep[w >> 6] |= 1 << (w & 63);
            }
        }
    }

    use crate::testing::Rng;

    fn check_kernel<T: Lane + std::fmt::Debug>(
        kernel: Kernel,
        seed: u64,
        max_value: i64,
        to: impl Fn(i64) -> T,
        from: impl Fn(T) -> i64,
    ) {
        let mut rng = Rng(seed);
        for _ in 0..300 {
            let words = 1 + rng.below(6) as usize;
            let cells = words * 64;
            let mut want_dp = vec![0i64; cells];
            let max_weight = cells - 1;
            let mut got_dp = vec![T::default(); dp_len(words, max_weight)];
            init_dp(&mut got_dp, max_weight);
            let n_rows = 1 + rng.below(12) as usize;
            let mut want = vec![0u64; n_rows * words];
            let mut got = vec![u64::MAX; n_rows * words];
            // Small weights often: they overlap sources within one vector.
            let weight = |rng: &mut Rng| {
                1 + if rng.below(3) == 0 {
                    rng.below(9)
                } else {
                    rng.below(cells as u64 - 1)
                } as usize
            };
            let mut r = 0;
            while r < n_rows {
                let a = (weight(&mut rng), rng.below(max_value as u64) as i64);
                let b = (weight(&mut rng), rng.below(max_value as u64) as i64);
                let lane = |v: i64| to(v);
                let (row_a, rest) = got[r * words..].split_at_mut(words);
                reference_row(
                    &mut want_dp,
                    &mut want[r * words..(r + 1) * words],
                    a.0,
                    a.1,
                );
                if r + 1 < n_rows && rng.below(4) != 0 {
                    reference_row(
                        &mut want_dp,
                        &mut want[(r + 1) * words..(r + 2) * words],
                        b.0,
                        b.1,
                    );
                    let row_b = &mut rest[..words];
                    rows(
                        kernel,
                        &mut got_dp,
                        max_weight,
                        row_a,
                        (a.0, lane(a.1)),
                        Some((row_b, (b.0, lane(b.1)))),
                        0,
                    );
                    r += 2;
                } else {
                    rows(
                        kernel,
                        &mut got_dp,
                        max_weight,
                        row_a,
                        (a.0, lane(a.1)),
                        None,
                        0,
                    );
                    r += 1;
                }
                let cells_got: Vec<i64> =
                    got_dp[pad(max_weight)..].iter().map(|&x| from(x)).collect();
                assert_eq!(cells_got, want_dp, "{kernel:?} dp after row {r}");
            }
            assert_eq!(got, want, "{kernel:?} keep bits");
        }
    }

    #[test]
    fn every_available_kernel_matches_the_scalar_row() {
        let kernels = Kernel::available();
        assert!(kernels.contains(&Kernel::Portable));
        for (i, &k) in kernels.iter().enumerate() {
            check_kernel::<i32>(k, i as u64, 10_000_000, |v| v as i32, |x| x as i64);
            check_kernel::<i64>(k, 100 + i as u64, 1 << 50, |v| v, |x| x);
            // 12 rows of values up to a twelfth of the Bits32 limit: the
            // padding-derived values come close to the negative NaNs.
            let max = BITS32_MAX_TOTAL / 12;
            check_kernel::<Bits32>(k, 200 + i as u64, max, Bits32::new, Bits32::get);
            // Values below 4: ties everywhere, and a tie sets no keep bit
            // (a row keeps a cell only when it improves it).
            check_kernel::<i32>(k, 300 + i as u64, 4, |v| v as i32, |x| x as i64);
            check_kernel::<i64>(k, 400 + i as u64, 4, |v| v, |x| x);
            check_kernel::<Bits32>(k, 500 + i as u64, 4, Bits32::new, Bits32::get);
        }
    }

    /// The multiple-choice row as specified on [`Choice`], scalar.
    fn reference_choice(dp: &mut [i64], keep: &mut [u64], words: usize, opts: &[(usize, i64)]) {
        keep.fill(0);
        for w in (0..dp.len()).rev() {
            let mut cur = dp[w];
            for (j, &(d, v)) in opts.iter().enumerate() {
                if w >= d && dp[w - d] + v > cur {
                    cur = dp[w - d] + v;
                    keep[j * words + (w >> 6)] |= 1 << (w & 63);
                }
            }
            dp[w] = cur;
        }
    }

    fn check_choice_kernel<T: Lane + std::fmt::Debug>(
        kernel: Kernel,
        seed: u64,
        max_value: i64,
        to: impl Fn(i64) -> T,
        from: impl Fn(T) -> i64,
    ) {
        let mut rng = Rng(seed);
        for _ in 0..200 {
            let words = 1 + rng.below(5) as usize;
            let cells = words * 64;
            let max_weight = cells - 1;
            let mut want_dp = vec![0i64; cells];
            let mut got_dp = vec![T::default(); dp_len(words, max_weight)];
            init_dp(&mut got_dp, max_weight);
            for _ in 0..1 + rng.below(8) {
                let most = if rng.chance(10) { 40 } else { 4 };
                let n = 1 + rng.below(most) as usize;
                let opts: Vec<(usize, i64)> = (0..n)
                    .map(|_| {
                        let d = 1 + if rng.chance(30) {
                            rng.below(9)
                        } else {
                            rng.below(max_weight as u64)
                        } as usize;
                        (d, rng.below(max_value as u64) as i64)
                    })
                    .collect();
                let mut want = vec![0u64; n * words];
                let mut got = vec![u64::MAX; n * words];
                reference_choice(&mut want_dp, &mut want, words, &opts);
                let lanes: Vec<(usize, T)> = opts.iter().map(|&(d, v)| (d, to(v))).collect();
                choice_row(kernel, &mut got_dp, max_weight, &mut got, words, &lanes, 0);
                let cells_got: Vec<i64> =
                    got_dp[pad(max_weight)..].iter().map(|&x| from(x)).collect();
                assert_eq!(cells_got, want_dp, "{kernel:?} dp, options {opts:?}");
                assert_eq!(got, want, "{kernel:?} keep bits, options {opts:?}");
            }
        }
    }

    #[test]
    fn every_available_kernel_matches_the_scalar_choice_row() {
        for (i, &k) in Kernel::available().iter().enumerate() {
            check_choice_kernel::<i32>(k, 600 + i as u64, 1_000_000, |v| v as i32, |x| x as i64);
            check_choice_kernel::<i64>(k, 700 + i as u64, 1 << 40, |v| v, |x| x);
            let max = BITS32_MAX_TOTAL / 40;
            check_choice_kernel::<Bits32>(k, 800 + i as u64, max, Bits32::new, Bits32::get);
            // Small values: ties everywhere (a tie sets no keep bit).
            check_choice_kernel::<i32>(k, 900 + i as u64, 3, |v| v as i32, |x| x as i64);
            check_choice_kernel::<Bits32>(k, 1000 + i as u64, 3, Bits32::new, Bits32::get);
        }
    }

    #[test]
    fn choice_kernels_check_every_bound_first() {
        // A valid row passes; each broken bound alone is refused.
        let (words, pad) = (2usize, 128usize);
        let opts = [(3usize, 1i32), (5, 2)];
        let attempt = |n: usize, keep: usize, end: usize, dp: usize, d: usize, v: i32| {
            std::panic::catch_unwind(|| {
                let mut dp_cells = vec![0i32; dp];
                let mut keep_words = vec![0u64; keep];
                let mut o: Vec<(usize, i32)> = opts.iter().cycle().take(n).copied().collect();
                if let Some(first) = o.first_mut() {
                    *first = (d, v);
                }
                check_choice(&Choice {
                    dp: &mut dp_cells,
                    pad,
                    keep: &mut keep_words,
                    words,
                    opts: &o,
                    blocks: 0..end,
                });
            })
            .is_ok()
        };
        let dp = pad + 64 * words;
        assert!(attempt(2, 4, 2, dp, 3, 1), "a valid row");
        assert!(
            attempt(MAX_OPTIONS, MAX_OPTIONS * 2, 2, dp, 3, 1),
            "the most options"
        );
        assert!(!attempt(0, 0, 2, dp, 3, 1), "no option");
        assert!(
            !attempt(MAX_OPTIONS + 1, (MAX_OPTIONS + 1) * 2, 2, dp, 3, 1),
            "too many"
        );
        assert!(
            !attempt(2, 3, 2, dp, 3, 1),
            "a keep table of the wrong size"
        );
        assert!(!attempt(2, 4, 3, dp, 3, 1), "a block past the keep words");
        assert!(!attempt(2, 4, 2, dp - 1, 3, 1), "a DP array too short");
        assert!(!attempt(2, 4, 2, dp, 0, 1), "a weight of 0");
        assert!(attempt(2, 4, 2, dp, pad, 1), "a weight of the padding");
        assert!(
            !attempt(2, 4, 2, dp, pad + 1, 1),
            "a weight past the padding"
        );
        assert!(!attempt(2, 4, 2, dp, 3, -1), "a negative value");
    }

    #[test]
    fn choice_rows_refuse_a_weight_over_max_weight_or_a_wrong_keep_table() {
        let run = |d: usize, keep: usize| {
            std::panic::catch_unwind(|| {
                let mut dp = vec![0i32; dp_len(1, 8)];
                init_dp(&mut dp, 8);
                let mut k = vec![0u64; keep];
                choice_row(
                    Kernel::Portable,
                    &mut dp,
                    8,
                    &mut k,
                    1,
                    &[(d, 1), (2, 1)],
                    0,
                );
            })
            .is_ok()
        };
        assert!(run(8, 2));
        assert!(!run(9, 2), "over max_weight");
        assert!(!run(8, 3), "a keep table of the wrong size");
    }

    #[test]
    fn saturating_choice_rows_match_the_scalar_row() {
        let mut rng = Rng(41);
        let (words, max_weight) = (2, 127);
        let mut want_dp = vec![0i64; 128];
        let mut got_dp = vec![0i64; dp_len(words, max_weight)];
        init_dp(&mut got_dp, max_weight);
        for _ in 0..30 {
            let opts: Vec<(usize, i64)> = (0..1 + rng.below(4))
                .map(|_| (1 + rng.below(127) as usize, (rng.next() >> 4) as i64))
                .collect();
            let mut want = vec![0u64; opts.len() * words];
            let mut got = vec![7u64; opts.len() * words];
            // The scalar oracle saturates too.
            want.fill(0);
            for w in (0..128).rev() {
                let mut cur = want_dp[w];
                for (j, &(d, v)) in opts.iter().enumerate() {
                    if w >= d && want_dp[w - d].saturating_add(v) > cur {
                        cur = want_dp[w - d].saturating_add(v);
                        want[j * words + (w >> 6)] |= 1 << (w & 63);
                    }
                }
                want_dp[w] = cur;
            }
            choice_row_saturating(&mut got_dp, max_weight, &mut got, words, &opts);
            assert_eq!((&got_dp[pad(max_weight)..], &got), (&want_dp[..], &want));
        }
    }

    #[test]
    fn saturating_rows_match_the_scalar_row() {
        let mut want_dp = vec![0i64; 128];
        let mut got_dp = vec![0i64; dp_len(2, 127)];
        init_dp(&mut got_dp, 127);
        let mut want_keep = vec![0u64; 2];
        let mut got_keep = vec![7u64; 2];
        // Saturated rows, then seeded rows of moderate values whose sums
        // overflow only after a few rows (saturated cells alone cannot tell
        // a wrong source cell from the right one).
        let mut rng = crate::testing::Rng(31);
        let mut rows = vec![(3, i64::MAX), (5, i64::MAX - 1), (70, 12), (1, i64::MAX)];
        for _ in 0..40 {
            rows.push((1 + rng.below(127) as usize, (rng.next() >> 3) as i64));
        }
        // Afresh from zero for the seeded part.
        for (k, (d, value)) in rows.into_iter().enumerate() {
            if k == 4 {
                want_dp.fill(0);
                init_dp(&mut got_dp, 127);
            }
            reference_row(&mut want_dp, &mut want_keep, d, value);
            row_saturating(&mut got_dp, 127, &mut got_keep, d, value);
            assert_eq!(
                (&got_dp[pad(127)..], &got_keep),
                (&want_dp[..], &want_keep),
                "d {d}"
            );
        }
    }

    #[test]
    fn kernel_names_are_the_documented_values() {
        // The values CUPEL_KNAPSACK_KERNEL accepts (docs/performance.md).
        let names: Vec<&str> = [
            Kernel::Portable,
            Kernel::Sse2,
            Kernel::Sse41,
            Kernel::Avx2,
            Kernel::Avx512,
        ]
        .iter()
        .map(|k| k.name())
        .collect();
        assert_eq!(names, ["portable", "sse2", "sse4.1", "avx2", "avx512"]);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn bits32_lanes_for_the_kernels_without_an_i32_max_and_totals_they_hold() {
        for k in [Kernel::Portable, Kernel::Sse2] {
            assert!(use_bits32(k, 0) && use_bits32(k, BITS32_MAX_TOTAL), "{k:?}");
            assert!(
                !use_bits32(k, BITS32_MAX_TOTAL + 1),
                "{k:?}: overflows the lane"
            );
            assert!(!use_bits32(k, -1), "{k:?}");
        }
        for k in [Kernel::Sse41, Kernel::Avx2, Kernel::Avx512] {
            assert!(!use_bits32(k, 5), "{k:?} has an i32 max");
        }
    }

    #[test]
    #[should_panic(expected = "f.blocks.end <= words")]
    fn fused_kernels_check_their_bounds_first() {
        // A block past the keep words: refused before any intrinsic runs.
        let mut dp = vec![0i32; dp_len(1, 8)];
        let (mut keep_a, mut keep_b) = ([0u64; 1], [0u64; 1]);
        check(&Fused {
            dp: &mut dp,
            pad: pad(8),
            keep_a: &mut keep_a,
            keep_b: &mut keep_b,
            a: (3, 1),
            b: (4, 1),
            blocks: 0..2,
        });
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[test]
    fn only_the_portable_kernel_elsewhere() {
        assert_eq!(Kernel::available(), vec![Kernel::Portable]);
        assert_eq!(Kernel::selected(), Kernel::Portable);
    }

    #[test]
    fn selected_kernel_is_the_one_asked_for_or_the_fastest() {
        // tests/run_all.sh reruns these tests with each kernel forced: a
        // dispatch that ignored the request, or picked a slower kernel by
        // default, fails here.
        let available = Kernel::available();
        let asked = std::env::var("CUPEL_KNAPSACK_KERNEL").unwrap_or_default();
        let want = match available.iter().find(|k| k.name() == asked) {
            Some(&k) => k,
            // Unset, or a kernel this CPU lacks: the fastest.
            None => *available.last().unwrap(),
        };
        assert_eq!(Kernel::selected(), want);
    }
}
