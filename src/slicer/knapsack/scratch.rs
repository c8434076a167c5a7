//! The buffers of KnapsackSlice, kept per thread between slice calls, and
//! their fallible allocation (a failure is a capacity error, never an abort).

use std::cell::RefCell;

use super::filter::Filter;
use crate::error::{Error, Result};
use crate::slicer::kernel::{self, Bits32};

/// Scratch buffers kept per thread between slice calls, so that repeated
/// calls of similar size allocate nothing.
#[derive(Default)]
pub(super) struct Scratch {
    pub keep: Vec<u64>,
    pub dp32: Vec<i32>,
    pub dp_bits32: Vec<Bits32>,
    pub dp64: Vec<i64>,
    /// (item, discretised weight, value) of the rows that can matter.
    pub rows: Vec<(u32, i64, i64)>,
    pub filter: Filter,
    /// KnapsackSlice over options: its own and the reduction's.
    pub choice: super::choice::Buffers,
    pub reduce: super::reduce::Buffers,
}

/// Scratch larger than this is released after the call instead of kept.
const SCRATCH_RETAIN_BYTES: usize = 64 << 20;

impl Scratch {
    pub(super) fn trim(&mut self) {
        let bytes = self.keep.capacity() * 8
            + (self.dp32.capacity() + self.dp_bits32.capacity()) * 4
            + self.dp64.capacity() * 8
            + self.rows.capacity() * std::mem::size_of::<(u32, i64, i64)>()
            + self.filter.bytes()
            + self.choice.bytes()
            + self.reduce.bytes();
        if bytes > SCRATCH_RETAIN_BYTES {
            *self = Scratch::default();
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// Runs `f` with this thread's scratch buffers (fresh ones for a nested
/// call, none today), trimmed afterwards.
pub(super) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|scratch| {
        let mut fresh = Scratch::default();
        let mut guard = scratch.try_borrow_mut();
        let scratch = match guard.as_deref_mut() {
            Ok(s) => s,
            Err(_) => &mut fresh,
        };
        let out = f(scratch);
        scratch.trim();
        out
    })
}

/// `v` with exactly `len` elements; old contents are left (every keep word
/// is rewritten by its row). Allocation failure is a capacity error.
pub(super) fn grow<T: Copy + Default>(
    v: &mut Vec<T>,
    len: usize,
    needed: u128,
) -> Result<&mut [T]> {
    // Nothing to reserve (and no resize) when `v` is long enough already.
    v.try_reserve_exact(len.saturating_sub(v.len()))
        .map_err(|e| {
            Error::Capacity(format!(
                "cannot allocate the knapsack table ({needed} bytes): {e}"
            ))
        })?;
    v.resize(v.len().max(len), T::default());
    Ok(&mut v[..len])
}

/// `v` as an initialised DP array for `words` keep words.
pub(super) fn dp_array<T: kernel::Lane>(
    v: &mut Vec<T>,
    words: usize,
    max_weight: usize,
    needed: u128,
) -> Result<&mut [T]> {
    // 64 bytes of slack so the array can start on a cache line: the
    // kernels' loads and stores of cell-aligned vectors then never straddle
    // two lines.
    let slack = 64 / std::mem::size_of::<T>();
    let len = kernel::dp_len(words, max_weight);
    let all = grow(v, len + slack, needed)?;
    let skip = all.as_ptr().align_offset(64).min(slack);
    let dp = &mut all[skip..skip + len];
    kernel::init_dp(dp, max_weight);
    Ok(dp)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    fn sized(keep_words: usize, each_other: usize) -> Scratch {
        let mut s = Scratch::default();
        s.keep.reserve_exact(keep_words);
        s.dp32.reserve_exact(each_other / 4);
        s.dp_bits32.reserve_exact(each_other / 4);
        s.dp64.reserve_exact(each_other / 8);
        s.rows.reserve_exact(each_other / 24);
        s
    }

    #[test]
    fn grow_reserves_exactly_what_is_missing_and_keeps_longer_buffers() {
        let mut v: Vec<u64> = Vec::new();
        assert_eq!(grow(&mut v, 100, 800).unwrap().len(), 100);
        assert_eq!((v.len(), v.capacity()), (100, 100));
        assert_eq!(grow(&mut v, 250, 2000).unwrap().len(), 250);
        assert_eq!((v.len(), v.capacity()), (250, 250), "150 more, not 400");
        v[200] = 7;
        let shorter = grow(&mut v, 220, 1760).unwrap();
        assert_eq!((shorter.len(), shorter[200]), (220, 7));
        assert_eq!(v.len(), 250, "a longer buffer is kept as it is");
    }

    #[test]
    fn dp_arrays_start_on_a_cache_line_with_64_bytes_of_slack() {
        fn check<T: kernel::Lane>(v: &mut Vec<T>) {
            let size = std::mem::size_of::<T>();
            for (words, max_weight) in [(1, 1), (3, 100), (40, 2000)] {
                let dp = dp_array(v, words, max_weight, 0).unwrap();
                assert_eq!(dp.len(), kernel::dp_len(words, max_weight));
                assert_eq!(dp.as_ptr() as usize % 64, 0, "{size}-byte cells");
                assert_eq!(v.len(), kernel::dp_len(words, max_weight) + 64 / size);
                v.clear();
                v.shrink_to_fit();
            }
        }
        check::<i32>(&mut Vec::new());
        check::<i64>(&mut Vec::new());
        check::<Bits32>(&mut Vec::new());
    }

    #[test]
    fn trim_keeps_scratch_up_to_64_mib_and_releases_more() {
        // Exactly 64 MiB: kept.
        let mut s = Scratch::default();
        s.keep.reserve_exact(64 * MIB / 8);
        s.trim();
        assert_eq!(s.keep.capacity(), 64 * MIB / 8);
        // Every buffer about 5 MiB, 25 MiB in all: kept.
        let mut s = sized(5 * MIB / 8, 5 * MIB);
        s.trim();
        assert!(s.keep.capacity() >= 5 * MIB / 8 && s.dp64.capacity() >= 5 * MIB / 8);
        assert!(s.dp32.capacity() > 0 && s.dp_bits32.capacity() > 0 && s.rows.capacity() > 0);
        // 61 MiB of keep words (8 bytes each) and 4 x ~1 MiB: past 64 MiB.
        let mut s = sized(61 * MIB / 8, MIB);
        s.trim();
        assert_eq!((s.keep.capacity(), s.dp64.capacity()), (0, 0));
        assert_eq!(
            (s.dp32.capacity(), s.dp_bits32.capacity(), s.rows.capacity()),
            (0, 0, 0)
        );
        // Any one buffer of 65 MiB alone, counted at its element size.
        let alone: [fn(&mut Scratch); 5] = [
            |s| s.keep.reserve_exact(65 * MIB / 8),
            |s| s.dp32.reserve_exact(65 * MIB / 4),
            |s| s.dp_bits32.reserve_exact(65 * MIB / 4),
            |s| s.dp64.reserve_exact(65 * MIB / 8),
            |s| s.rows.reserve_exact(65 * MIB / 24),
        ];
        for (k, grow) in alone.iter().enumerate() {
            let mut s = Scratch::default();
            grow(&mut s);
            s.trim();
            let left = s.keep.capacity()
                + s.dp32.capacity()
                + s.dp_bits32.capacity()
                + s.dp64.capacity()
                + s.rows.capacity();
            assert_eq!(left, 0, "buffer {k} kept");
        }
    }
}
