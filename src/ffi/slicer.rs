//! `cupel_slicer`: slicer construction.

use super::*;
use crate::pipeline::Engine;
use crate::slicer::{CountEntry, CountQuota, Knapsack, Quota, QuotaEntry, Scarcity, Slicer};

/// Opaque handle: a configured slicer. Create with a `cupel_slicer_new_*`
/// function, free exactly once with `cupel_slicer_free`.
pub struct cupel_slicer {
    pub(crate) inner: Engine,
}

/// One QuotaSlice entry: percentages of the target budget for a kind.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cupel_quota {
    /// NUL-terminated UTF-8 kind (ASCII case-insensitive); not NULL.
    pub kind: *const c_char,
    /// At least this share of the target is reserved for the kind, in [0, 100].
    pub require_percent: f64,
    /// At most this share of the target goes to the kind, in [require, 100].
    pub cap_percent: f64,
}

/// One count entry of CountQuotaSlice / CountConstrainedKnapsackSlice.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cupel_count_quota {
    /// NUL-terminated UTF-8 kind (ASCII case-insensitive); not NULL.
    pub kind: *const c_char,
    /// At least this many items of the kind are selected (if they exist).
    pub require_count: u32,
    /// At most this many items of the kind are selected (>= require_count).
    pub cap_count: u32,
}

fn hand_out_slicer(out: Out<*mut cupel_slicer>, slicer: Slicer, memory_limit: usize) {
    hand_out(
        out,
        cupel_slicer {
            inner: Engine {
                slicer,
                memory_limit,
            },
        },
    );
}

fn scarcity_of(scarcity: std::ffi::c_int) -> Result<Scarcity> {
    match scarcity {
        0 => Ok(Scarcity::Degrade),
        1 => Ok(Scarcity::Error),
        v => Err(crate::Error::InvalidArgument(format!(
            "scarcity is {v}; expected CUPEL_SCARCITY_DEGRADE (0) or CUPEL_SCARCITY_ERROR (1)"
        ))),
    }
}

/// The core's count entries from the caller's array.
///
/// # Safety
/// `entries` is NULL or points to `count` entries whose kinds are NULL or
/// NUL-terminated strings.
unsafe fn count_entries(
    entries: *const cupel_count_quota,
    count: usize,
) -> Result<Vec<CountEntry>> {
    // SAFETY: the caller's promise, passed on.
    let entries = unsafe { arg_slice(entries, count, "entries") }?;
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            Ok(CountEntry {
                // SAFETY: each kind is NULL or a valid string (the caller's promise).
                kind: unsafe { arg_str(e.kind, &format!("entries[{i}].kind")) }?.to_owned(),
                require: e.require_count,
                cap: e.cap_count,
            })
        })
        .collect()
}

ffi_fn! {
    /// Creates a GreedySlice: value density (score per token) greedy fill; output
    /// in density order. Free with `cupel_slicer_free`.
    ///
    /// The memory limit starts at the default, 1 GiB (see `cupel_slicer_set_memory_limit`).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`).
    unsafe fn cupel_slicer_new_greedy(out: *mut *mut cupel_slicer) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        hand_out_slicer(out, Slicer::Greedy, crate::slicer::DEFAULT_MEMORY_LIMIT);
        Ok(())
    }
}

ffi_fn! {
    /// Creates a KnapsackSlice: 0/1 knapsack DP with token weights discretised
    /// into buckets of `bucket_size` tokens (100 is the spec's default; 1 is
    /// exact). Output: zero-token items first, then the DP selection. Its table
    /// takes about items x (target / bucket_size) / 8 bytes, bounded by the memory
    /// limit (default 1 GiB). Free with `cupel_slicer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (`bucket_size` <= 0).
    unsafe fn cupel_slicer_new_knapsack(
        bucket_size: i64,
        out: *mut *mut cupel_slicer,
    ) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        let k = Knapsack::new(bucket_size)?;
        hand_out_slicer(
            out,
            Slicer::Knapsack(k),
            crate::slicer::DEFAULT_MEMORY_LIMIT,
        );
        Ok(())
    }
}

ffi_fn! {
    /// Creates a QuotaSlice over a copy of `inner` (the caller may free `inner`
    /// right after): the target is split across kinds by `quotas[0 .. count)`
    /// (require/cap percentages), and `inner` selects within each kind. Kinds
    /// without a quota get require 0 %, cap 100 %. Output: kind by kind, in the
    /// order each kind first appears in score order. The new slicer takes
    /// `inner`'s memory limit. Free with `cupel_slicer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`inner`, `out`, `quotas` with count > 0,
    /// a quota's kind), CUPEL_ERROR_INVALID_ARGUMENT (a percentage non-finite or
    /// outside [0, 100], require > cap, requires summing over 100, the same kind
    /// twice, a bad kind).
    unsafe fn cupel_slicer_new_quota(
        inner: *const cupel_slicer,
        quotas: *const cupel_quota,
        count: usize,
        out: *mut *mut cupel_slicer,
    ) -> cupel_status {
        // SAFETY: `inner`, `quotas`, `out` are NULL or valid as documented (the caller's promise).
        let (inner, quotas, out) = unsafe {
            (
                arg_ref(inner, "inner")?,
                arg_slice(quotas, count, "quotas")?,
                Out::new(out, "out")?,
            )
        };
        let entries = quotas
            .iter()
            .enumerate()
            .map(|(i, q)| {
                Ok(QuotaEntry {
                    // SAFETY: each kind is a valid string (the caller's promise).
                    kind: unsafe { arg_str(q.kind, &format!("quotas[{i}].kind")) }?.to_owned(),
                    require_percent: q.require_percent,
                    cap_percent: q.cap_percent,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let quota = Quota::new(inner.inner.slicer.clone(), entries)?;
        hand_out_slicer(out, Slicer::Quota(quota), inner.inner.memory_limit);
        Ok(())
    }
}

ffi_fn! {
    /// Creates a CountQuotaSlice over a copy of `inner` (the caller may free
    /// `inner` right after): first the best `require_count` items of each entry's
    /// kind are committed (even beyond the budget), then `inner` fills the rest
    /// of the budget, then items over a kind's `cap_count` are dropped.
    /// `scarcity` is a `cupel_scarcity` value (taken as `int` so that any number
    /// is safe): what to do when a kind has fewer items than required. The new
    /// slicer takes `inner`'s memory limit. Free with `cupel_slicer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`inner`, `out`, `entries` with count > 0,
    /// an entry's kind), CUPEL_ERROR_UNSUPPORTED (`inner` is a KnapsackSlice: use
    /// `cupel_slicer_new_count_constrained_knapsack`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (require_count > cap_count, cap_count 0 with require_count > 0, the same
    /// kind twice, a bad kind, an unknown scarcity).
    unsafe fn cupel_slicer_new_count_quota(
        inner: *const cupel_slicer,
        entries: *const cupel_count_quota,
        count: usize,
        scarcity: std::ffi::c_int,
        out: *mut *mut cupel_slicer,
    ) -> cupel_status {
        // SAFETY: `inner`, `entries` are NULL or valid as documented (the caller's promise).
        let (inner, entries) = unsafe {
            (
                arg_ref(inner, "inner")?,
                count_entries(entries, count)?,
            )
        };
        let scarcity = scarcity_of(scarcity)?;
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        let cq = CountQuota::new(inner.inner.slicer.clone(), entries, scarcity)?;
        hand_out_slicer(out, Slicer::CountQuota(cq), inner.inner.memory_limit);
        Ok(())
    }
}

ffi_fn! {
    /// Creates a CountConstrainedKnapsackSlice: the CountQuotaSlice phases around
    /// a KnapsackSlice of `bucket_size`, whose output is re-ordered by score
    /// before caps apply (so caps keep the best items). Free with `cupel_slicer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`, `entries` with count > 0, an
    /// entry's kind), CUPEL_ERROR_INVALID_ARGUMENT (`bucket_size` <= 0, and the
    /// entry rules of `cupel_slicer_new_count_quota`).
    unsafe fn cupel_slicer_new_count_constrained_knapsack(
        bucket_size: i64,
        entries: *const cupel_count_quota,
        count: usize,
        scarcity: std::ffi::c_int,
        out: *mut *mut cupel_slicer,
    ) -> cupel_status {
        // SAFETY: `entries` is NULL or valid as documented (the caller's promise).
        let entries = unsafe { count_entries(entries, count) }?;
        let scarcity = scarcity_of(scarcity)?;
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        let cq = CountQuota::knapsack(bucket_size, entries, scarcity)?;
        hand_out_slicer(
            out,
            Slicer::CountKnapsack(cq),
            crate::slicer::DEFAULT_MEMORY_LIMIT,
        );
        Ok(())
    }
}

ffi_fn! {
    /// Sets the bound, in bytes, on the working memory of one slice call made
    /// with this slicer: a knapsack's keep table (1 bit per cell) and DP array,
    /// including knapsacks nested in decorators. A call that would need more fails with
    /// CUPEL_ERROR_CAPACITY instead of allocating. The default is 1 GiB
    /// (1073741824). Do not call while another thread slices with this slicer.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`slicer`).
    unsafe fn cupel_slicer_set_memory_limit(
        slicer: *mut cupel_slicer,
        bytes: usize,
    ) -> cupel_status {
        // SAFETY: `slicer` is NULL or valid as documented (the caller's promise).
        unsafe { arg_mut(slicer, "slicer") }?.inner.memory_limit = bytes;
        Ok(())
    }
}

ffi_fn! {
    /// The memory limit of `slicer` in bytes; 0 for NULL.
    unsafe fn cupel_slicer_memory_limit(slicer: *const cupel_slicer) -> usize [0] {
        // SAFETY: `slicer` is NULL or valid as documented (the caller's promise).
        let slicer = unsafe { arg_opt_ref(slicer, "slicer") };
        slicer.ok().flatten().map_or(0, |s| s.inner.memory_limit)
    }
}

ffi_fn! {
    /// Frees a slicer. NULL is a no-op. Free each handle exactly once; decorators
    /// made from it keep their own copy.
    unsafe fn cupel_slicer_free(slicer: *mut cupel_slicer) {
        // SAFETY: NULL or a handle from its `_new` function, freed once (the caller's promise).
        unsafe { release(slicer) }
    }
}
