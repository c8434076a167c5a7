//! `cupel_report`: diagnostics of one slice call.

use super::*;
use crate::pipeline::Outcome;

/// Opaque handle: what one `cupel_slice` call did. Create with
/// `cupel_report_new`, pass to `cupel_slice` (which overwrites it; a failed
/// call leaves it empty), free exactly once with `cupel_report_free`.
/// Use one report per thread.
pub struct cupel_report {
    pub(crate) outcome: Outcome,
    /// Shortfall kinds as C strings, parallel to `outcome.shortfalls`.
    pub(crate) kinds: Vec<CString>,
}

impl cupel_report {
    pub(crate) fn empty() -> Self {
        cupel_report {
            outcome: Outcome::default(),
            kinds: Vec::new(),
        }
    }

    /// Takes the diagnostics of `outcome` (its selection, already written
    /// to the caller's buffer, is dropped rather than copied).
    pub(crate) fn fill(&mut self, outcome: Outcome) {
        self.kinds = outcome
            .shortfalls
            .iter()
            .map(|s| CString::new(s.kind.as_str()).unwrap_or_default())
            .collect();
        self.outcome = Outcome {
            selected: Vec::new(),
            ..outcome
        };
    }
}

ffi_fn! {
    /// Creates an empty report. Free it exactly once with `cupel_report_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`).
    unsafe fn cupel_report_new(out: *mut *mut cupel_report) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        hand_out(out, cupel_report::empty());
        Ok(())
    }
}

ffi_fn! {
    /// Frees a report. NULL is a no-op. Strings it handed out become invalid.
    unsafe fn cupel_report_free(report: *mut cupel_report) {
        // SAFETY: NULL or a handle from its `_new` function, freed once (the caller's promise).
        unsafe { release(report) }
    }
}

/// `f` of the report, or `T::default()` (0) for a NULL report.
///
/// # Safety
/// `report` is NULL or a valid report handle.
unsafe fn read<T: Default>(report: *const cupel_report, f: impl FnOnce(&cupel_report) -> T) -> T {
    // SAFETY: the caller's promise, passed on.
    let report = unsafe { arg_opt_ref(report, "report") };
    report.ok().flatten().map(f).unwrap_or_default()
}

ffi_fn! {
    /// The effective max tokens of the call (after output reserve, pinned
    /// tokens, reserved slots and safety margin); 0 for NULL.
    unsafe fn cupel_report_effective_max_tokens(report: *const cupel_report) -> i64 [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.outcome.effective_max) }
    }
}

ffi_fn! {
    /// The effective target tokens the slicer got; 0 for NULL.
    unsafe fn cupel_report_effective_target_tokens(report: *const cupel_report) -> i64 [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.outcome.effective_target) }
    }
}

ffi_fn! {
    /// The sum of the selected items' tokens (saturating at INT64_MAX); 0 for NULL.
    unsafe fn cupel_report_selected_tokens(report: *const cupel_report) -> i64 [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.outcome.selected_tokens) }
    }
}

ffi_fn! {
    /// The number of count requirements that could not be met (scarcity
    /// DEGRADE), from count-based slicers at any nesting depth, in the order they
    /// were recorded; 0 for NULL. A count slicer nested in a QuotaSlice runs once
    /// per kind partition, and each run records its own shortfalls (an entry
    /// whose kind is absent from a partition records required/0 there).
    unsafe fn cupel_report_shortfall_count(report: *const cupel_report) -> usize [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.outcome.shortfalls.len()) }
    }
}

ffi_fn! {
    /// Shortfall `i` (< `cupel_report_shortfall_count`): its kind as spelled in
    /// the count entry (valid until the report is reused or freed), the required
    /// count and the count that could be satisfied.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (`i` out of range).
    unsafe fn cupel_report_shortfall(
        report: *const cupel_report,
        i: usize,
        out_kind: *mut *const c_char,
        out_required: *mut u32,
        out_satisfied: *mut u32,
    ) -> cupel_status {
        // SAFETY: `report`, `out_kind`, `out_required`, `out_satisfied` are NULL or valid as documented (the caller's promise).
        let (report, out_kind, out_required, out_satisfied) = unsafe {
            (
                arg_ref(report, "report")?,
                Out::new(out_kind, "out_kind")?,
                Out::new(out_required, "out_required")?,
                Out::new(out_satisfied, "out_satisfied")?,
            )
        };
        let n = report.outcome.shortfalls.len();
        let s = report.outcome.shortfalls.get(i).ok_or_else(|| {
            crate::Error::InvalidArgument(format!(
                "i {i} is out of range: the report has {n} shortfalls"
            ))
        })?;
        out_kind.set(report.kinds[i].as_ptr());
        out_required.set(s.required);
        out_satisfied.set(s.satisfied);
        Ok(())
    }
}

ffi_fn! {
    /// The number of items dropped because their kind reached its cap_count,
    /// from count-based slicers at any nesting depth; 0 for NULL.
    unsafe fn cupel_report_cap_excluded_count(report: *const cupel_report) -> usize [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.outcome.cap_excluded.len()) }
    }
}

ffi_fn! {
    /// The item index of cap exclusion `i` (< `cupel_report_cap_excluded_count`),
    /// in the order the exclusions happened.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (`i` out of range).
    unsafe fn cupel_report_cap_excluded(
        report: *const cupel_report,
        i: usize,
        out_item_index: *mut usize,
    ) -> cupel_status {
        // SAFETY: `report`, `out_item_index` are NULL or valid as documented (the caller's promise).
        let (report, out) = unsafe {
            (
                arg_ref(report, "report")?,
                Out::new(out_item_index, "out_item_index")?,
            )
        };
        let n = report.outcome.cap_excluded.len();
        let &item = report.outcome.cap_excluded.get(i).ok_or_else(|| {
            crate::Error::InvalidArgument(format!(
                "i {i} is out of range: the report has {n} cap exclusions"
            ))
        })?;
        out.set(item as usize);
        Ok(())
    }
}
