//! `cupel_report`: the SelectionReport of one `cupel_slice` or
//! `cupel_pipeline_run` call.

use super::*;
use crate::pipeline::{Decision, Reason, Report};

/// Opaque handle: what one `cupel_slice` or `cupel_pipeline_run` call
/// decided. Create with `cupel_report_new`, pass to a call (which
/// overwrites it; a failed call leaves it empty), free exactly once with
/// `cupel_report_free`. Use one report per thread.
pub struct cupel_report {
    pub(crate) report: Report,
    /// Shortfall kinds as C strings, parallel to the outcome's shortfalls.
    pub(crate) kinds: Vec<CString>,
}

impl cupel_report {
    pub(crate) fn empty() -> Self {
        cupel_report {
            report: Report::default(),
            kinds: Vec::new(),
        }
    }

    /// Takes `report` (the selection, already written to the caller's
    /// buffer, is dropped rather than kept twice).
    pub(crate) fn fill(&mut self, mut report: Report) {
        self.kinds = report
            .outcome
            .shortfalls
            .iter()
            .map(|s| CString::new(s.kind.as_str()).unwrap_or_default())
            .collect();
        report.outcome.selected = Vec::new();
        self.report = report;
    }
}

/// The optional report argument of a call that fills one, checked and
/// emptied first, so that a call failing later leaves it empty.
///
/// # Safety
/// `report` is NULL or a valid report handle that nothing else uses.
pub(crate) unsafe fn report_arg<'a>(
    report: *mut cupel_report,
) -> Result<Option<&'a mut cupel_report>> {
    // SAFETY: the caller's promise, passed on.
    let report = unsafe { arg_opt_mut(report, "report") }?;
    Ok(report.map(|r| {
        *r = cupel_report::empty();
        r
    }))
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
        unsafe { read(report, |r| r.report.outcome.effective_max) }
    }
}

ffi_fn! {
    /// The effective target tokens the slicer got; 0 for NULL.
    unsafe fn cupel_report_effective_target_tokens(report: *const cupel_report) -> i64 [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.report.outcome.effective_target) }
    }
}

ffi_fn! {
    /// The sum of the selected items' tokens (saturating at INT64_MAX); 0 for NULL.
    unsafe fn cupel_report_selected_tokens(report: *const cupel_report) -> i64 [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.report.outcome.selected_tokens) }
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
        unsafe { read(report, |r| r.report.outcome.shortfalls.len()) }
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
        let n = report.report.outcome.shortfalls.len();
        let s = report.report.outcome.shortfalls.get(i).ok_or_else(|| {
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
        unsafe { read(report, |r| r.report.outcome.cap_excluded.len()) }
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
        let n = report.report.outcome.cap_excluded.len();
        let &item = report.report.outcome.cap_excluded.get(i).ok_or_else(|| {
            crate::Error::InvalidArgument(format!(
                "i {i} is out of range: the report has {n} cap exclusions"
            ))
        })?;
        out.set(item as usize);
        Ok(())
    }
}

/// Why an item was included or excluded (`cupel_decision.reason`). The
/// numbers never change and are never reused. The reserved ones are in the
/// specification for future use and never reported by this library.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cupel_reason {
    /// Included: selected on its score within the budget.
    CUPEL_REASON_SCORED = 0,
    /// Included: pinned (bypasses scoring and slicing; score 1.0).
    CUPEL_REASON_PINNED = 1,
    /// Included: costs no tokens.
    CUPEL_REASON_ZERO_TOKEN = 2,
    /// Included as one of its variants (`cupel_items_add_variant`):
    /// `cupel_report_included_variant` says which and its tokens.
    CUPEL_REASON_VARIANT = 3,
    /// Included cut down to fit what the slicer left
    /// (`cupel_items_set_truncatable`): `cupel_report_included_cut` gives
    /// the kept byte ranges (all of the content when the whole text, as
    /// the tokenizer counts it, fits what was left).
    CUPEL_REASON_TRUNCATED = 4,
    /// Excluded: did not fit; `item_tokens` and `available_tokens` (the
    /// tokens left: the effective target minus what was selected, or in
    /// truncation the target minus what was kept before it).
    CUPEL_REASON_BUDGET_EXCEEDED = 10,
    /// Reserved (ScoredTooLow).
    CUPEL_REASON_SCORED_TOO_LOW = 11,
    /// Excluded: byte-identical content to `related_index`, which was kept.
    CUPEL_REASON_DEDUPLICATED = 12,
    /// Reserved (QuotaCapExceeded).
    CUPEL_REASON_QUOTA_CAP_EXCEEDED = 13,
    /// Reserved (QuotaRequireDisplaced).
    CUPEL_REASON_QUOTA_REQUIRE_DISPLACED = 14,
    /// Excluded: a negative token count (`item_tokens`).
    CUPEL_REASON_NEGATIVE_TOKENS = 15,
    /// Excluded in overflow truncation: it would have fit but for the
    /// pinned items; `related_index` is the first pinned item.
    CUPEL_REASON_PINNED_OVERRIDE = 16,
    /// Reserved (Filtered).
    CUPEL_REASON_FILTERED = 17,
    /// Excluded by a count-based slicer: its kind had reached cap_count.
    CUPEL_REASON_COUNT_CAP_EXCEEDED = 18,
    /// Excluded by a session (`cupel_session_run`): the fresh selection
    /// takes it, but the session keeps the prompt's cached prefix instead:
    /// an item it left out before stays out until the next compaction, and
    /// a compaction leaves its slack free.
    CUPEL_REASON_DEFERRED = 19,
}

/// One item's decision in a report.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cupel_decision {
    /// The item's push-order index.
    pub item_index: usize,
    /// The score the decision was made with: the Score stage's (the pushed
    /// score for `cupel_slice`), 1.0 for a pinned item, 0.0 for an item
    /// excluded before scoring (negative tokens).
    pub score: f64,
    /// A `cupel_reason` value.
    pub reason: i32,
    pub item_tokens: i64,
    /// BudgetExceeded and PinnedOverride: the tokens that were left; 0
    /// otherwise.
    pub available_tokens: i64,
    /// Deduplicated: the item kept; PinnedOverride: the pinned item that
    /// displaced it; SIZE_MAX when none.
    pub related_index: usize,
    /// The item's keep-together group (`cupel_items_set_group`); 0 when none.
    /// Every member of a group gets the same reason.
    pub group: u64,
    /// The tokens the decision was made on: the group's summed tokens for a
    /// grouped item (a BudgetExceeded group did not fit as a whole), the
    /// item's own `item_tokens` otherwise.
    pub group_tokens: i64,
}

pub use cupel_reason::*;

fn decision_of(d: &Decision) -> cupel_decision {
    cupel_decision {
        item_index: d.item as usize,
        score: d.score,
        reason: d.reason as i32,
        item_tokens: d.item_tokens,
        available_tokens: d.available_tokens,
        related_index: d.related.map_or(usize::MAX, |r| r as usize),
        group: d.group,
        group_tokens: d.group_tokens,
    }
}

// The C enum and the core's reasons are the same numbers.
const _: () = {
    assert!(Reason::Scored as i32 == cupel_reason::CUPEL_REASON_SCORED as i32);
    assert!(Reason::Pinned as i32 == cupel_reason::CUPEL_REASON_PINNED as i32);
    assert!(Reason::ZeroToken as i32 == cupel_reason::CUPEL_REASON_ZERO_TOKEN as i32);
    assert!(Reason::Variant as i32 == cupel_reason::CUPEL_REASON_VARIANT as i32);
    assert!(Reason::Truncated as i32 == cupel_reason::CUPEL_REASON_TRUNCATED as i32);
    assert!(Reason::BudgetExceeded as i32 == cupel_reason::CUPEL_REASON_BUDGET_EXCEEDED as i32);
    assert!(Reason::ScoredTooLow as i32 == cupel_reason::CUPEL_REASON_SCORED_TOO_LOW as i32);
    assert!(Reason::Deduplicated as i32 == cupel_reason::CUPEL_REASON_DEDUPLICATED as i32);
    assert!(
        Reason::QuotaCapExceeded as i32 == cupel_reason::CUPEL_REASON_QUOTA_CAP_EXCEEDED as i32
    );
    assert!(
        Reason::QuotaRequireDisplaced as i32
            == cupel_reason::CUPEL_REASON_QUOTA_REQUIRE_DISPLACED as i32
    );
    assert!(Reason::NegativeTokens as i32 == cupel_reason::CUPEL_REASON_NEGATIVE_TOKENS as i32);
    assert!(Reason::PinnedOverride as i32 == cupel_reason::CUPEL_REASON_PINNED_OVERRIDE as i32);
    assert!(Reason::Filtered as i32 == cupel_reason::CUPEL_REASON_FILTERED as i32);
    assert!(
        Reason::CountCapExceeded as i32 == cupel_reason::CUPEL_REASON_COUNT_CAP_EXCEEDED as i32
    );
    assert!(Reason::Deferred as i32 == cupel_reason::CUPEL_REASON_DEFERRED as i32);
};

/// Decision `i` of `list` (named `what` in the message) into `out`.
fn decision_at(list: &[Decision], i: usize, what: &str, out: Out<cupel_decision>) -> Result<()> {
    let d = list.get(i).ok_or_else(|| {
        crate::Error::InvalidArgument(format!(
            "i {i} is out of range: the report has {} {what} items",
            list.len()
        ))
    })?;
    out.set(decision_of(d));
    Ok(())
}

ffi_fn! {
    /// The number of included items; 0 for NULL.
    unsafe fn cupel_report_included_count(report: *const cupel_report) -> usize [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.report.included.len()) }
    }
}

ffi_fn! {
    /// Included item `i` (< `cupel_report_included_count`), in final placed
    /// order (slicer output order for `cupel_slice`).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (`i`
    /// out of range).
    unsafe fn cupel_report_included(
        report: *const cupel_report,
        i: usize,
        out: *mut cupel_decision,
    ) -> cupel_status {
        // SAFETY: `report`, `out` are NULL or valid as documented (the caller's promise).
        let (report, out) = unsafe { (arg_ref(report, "report")?, Out::new(out, "out")?) };
        decision_at(&report.report.included, i, "included", out)
    }
}

ffi_fn! {
    /// The number of excluded items; 0 for NULL.
    unsafe fn cupel_report_excluded_count(report: *const cupel_report) -> usize [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.report.excluded.len()) }
    }
}

ffi_fn! {
    /// Excluded item `i` (< `cupel_report_excluded_count`), by score
    /// descending; equal scores in the order the items were excluded.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (`i`
    /// out of range).
    unsafe fn cupel_report_excluded(
        report: *const cupel_report,
        i: usize,
        out: *mut cupel_decision,
    ) -> cupel_status {
        // SAFETY: `report`, `out` are NULL or valid as documented (the caller's promise).
        let (report, out) = unsafe { (arg_ref(report, "report")?, Out::new(out, "out")?) };
        decision_at(&report.report.excluded, i, "excluded", out)
    }
}

ffi_fn! {
    /// The number of items the call considered: included plus excluded
    /// (every item of the list); 0 for NULL.
    unsafe fn cupel_report_total_candidates(report: *const cupel_report) -> i64 [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.report.total_candidates() as i64) }
    }
}

ffi_fn! {
    /// The sum of the tokens of every included and excluded item
    /// (saturating); 0 for NULL.
    unsafe fn cupel_report_total_tokens_considered(report: *const cupel_report) -> i64 [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.report.total_tokens_considered()) }
    }
}

ffi_fn! {
    /// The spec's OverflowEvent `tokens_over_budget`: how many tokens the
    /// placed items (pinned and sliced) exceed `target_tokens` by when the
    /// pipeline's overflow strategy is CUPEL_OVERFLOW_PROCEED and they do;
    /// 0 otherwise (no overflow, Throw, Truncate, a failed run), and 0 for
    /// NULL. The overflowing items are the report's included ones.
    unsafe fn cupel_report_tokens_over_budget(report: *const cupel_report) -> i64 [0] {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        unsafe { read(report, |r| r.report.tokens_over_budget) }
    }
}

ffi_fn! {
    /// The report in the SelectionReport JSON wire format: events (one per
    /// stage, with its duration), included (placed order), excluded (score
    /// order), total_candidates, total_tokens_considered. `items` must be
    /// the list the report was made from (its contents and fields are
    /// written; an item without content has no "content"). UTF-8; `*out_len`
    /// is the length without a NUL, and a NUL is written after the text
    /// when it fits (a buffer of `*out_len + 1` bytes). Buffer rules as in
    /// `cupel_slice`: too small gives CUPEL_ERROR_BUFFER_TOO_SMALL with the
    /// length needed; `buf` may be NULL with `capacity` 0 to ask for it.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (an
    /// item index of the report is not in `items`),
    /// CUPEL_ERROR_BUFFER_TOO_SMALL.
    unsafe fn cupel_report_json(
        report: *const cupel_report,
        items: *const cupel_items,
        buf: *mut c_char,
        capacity: usize,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (report, items, out, out_len) = unsafe {
            (
                arg_ref(report, "report")?,
                arg_ref(items, "items")?,
                OutBuf::new(buf, capacity, "buf")?,
                Out::new(out_len, "out_len")?,
            )
        };
        let n = items.inner.len();
        let all = report.report.included.iter().chain(&report.report.excluded);
        if let Some(d) = all.clone().find(|d| d.item as usize >= n || d.related.is_some_and(|r| r as usize >= n)) {
            return Err(crate::Error::InvalidArgument(format!(
                "items holds {n} items, but the report names item {}: pass the list the report was made from",
                d.item
            )));
        }
        let text = report.report.json(&items.inner);
        let bytes = text.as_bytes();
        out.write_text(bytes, out_len, "buf")
    }
}
