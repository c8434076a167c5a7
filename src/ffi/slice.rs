//! `cupel_slice` and budget simulation.

use super::*;
use crate::pipeline::Report;

ffi_fn! {
    /// Runs one slice: the Sort stage (score descending, ties in push order),
    /// then the Slice stage with the effective budget of `budget` and
    /// `pinned_tokens` (>= 0), then the slicer.
    ///
    /// On success `*out_len` is the number of selected items and
    /// `out_indices[0 .. *out_len)` their item indices, in the slicer's output
    /// order. A buffer of `cupel_items_len(items)` entries always suffices. If
    /// `capacity` is smaller than needed the call returns
    /// CUPEL_ERROR_BUFFER_TOO_SMALL, sets `*out_len` to the count needed and
    /// writes nothing else. `out_indices` may be NULL only when `capacity` is 0.
    /// `report` may be NULL; if given it is overwritten (left empty on failure).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT
    /// (pinned_tokens < 0), CUPEL_ERROR_BUFFER_TOO_SMALL, CUPEL_ERROR_SCARCITY
    /// (a count slicer with scarcity ERROR), CUPEL_ERROR_CAPACITY (the memory limit).
    ///
    /// Thread safety: any number of threads may slice concurrently with the same
    /// slicer, items and budget, each with its own report.
    unsafe fn cupel_slice(
        slicer: *const cupel_slicer,
        items: *const cupel_items,
        budget: *const cupel_budget,
        pinned_tokens: i64,
        out_indices: *mut usize,
        capacity: usize,
        out_len: *mut usize,
        report: *mut cupel_report,
    ) -> cupel_status {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        let report = unsafe { report_arg(report) }?;
        // SAFETY: `slicer`, `items`, `budget`, `out_indices`, `out_len` are NULL or valid as documented (the caller's promise).
        let (slicer, items, budget, buf, out_len) = unsafe {
            (
                arg_ref(slicer, "slicer")?,
                arg_ref(items, "items")?,
                arg_ref(budget, "budget")?,
                OutBuf::new(out_indices, capacity, "out_indices")?,
                Out::new(out_len, "out_len")?,
            )
        };
        let outcome = slicer
            .inner
            .slice(&items.inner, &budget.inner, pinned_tokens)?;
        buf.write_all(&outcome.selected, out_len, "out_indices", |i| i as usize)?;
        if let Some(r) = report {
            r.fill(Report::of_slice(&items.inner, outcome));
        }
        Ok(())
    }
}

ffi_fn! {
    /// GetMarginalItems: the items selected at `budget` but not at the same
    /// budget with max and target reduced by `slack_tokens` (output reserve and
    /// reserved slots kept), in the order of the full-budget selection.
    /// `slack_tokens` 0 gives an empty result. Output buffer rules as in `cupel_slice`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT
    /// (slack_tokens < 0, or the reduced budget is invalid: target - slack < 0 or
    /// max - slack < output reserve; pinned_tokens < 0), CUPEL_ERROR_UNSUPPORTED
    /// (the slicer is or contains a QuotaSlice), CUPEL_ERROR_BUFFER_TOO_SMALL,
    /// and the errors of `cupel_slice`.
    unsafe fn cupel_marginal_items(
        slicer: *const cupel_slicer,
        items: *const cupel_items,
        budget: *const cupel_budget,
        pinned_tokens: i64,
        slack_tokens: i64,
        out_indices: *mut usize,
        capacity: usize,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: `slicer`, `items`, `budget`, `out_indices`, `out_len` are NULL or valid as documented (the caller's promise).
        let (slicer, items, budget, buf, out_len) = unsafe {
            (
                arg_ref(slicer, "slicer")?,
                arg_ref(items, "items")?,
                arg_ref(budget, "budget")?,
                OutBuf::new(out_indices, capacity, "out_indices")?,
                Out::new(out_len, "out_len")?,
            )
        };
        let marginal = slicer.inner.marginal_items(
            &items.inner,
            &budget.inner,
            pinned_tokens,
            slack_tokens,
        )?;
        buf.write_all(&marginal, out_len, "out_indices", |i| i as usize)
    }
}

ffi_fn! {
    /// FindMinBudgetFor: the smallest budget b (a probe budget has max = target
    /// = b, with `pinned_tokens` applied as in every slice call) at which item
    /// `target_index` is selected, found by binary search on
    /// [tokens of the item, `search_ceiling`]. Writes -1 to `*out_tokens` when
    /// the item is not selected even at the ceiling.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT
    /// (`target_index` out of range, `search_ceiling` below the item's tokens,
    /// pinned_tokens < 0), CUPEL_ERROR_UNSUPPORTED (the slicer is or contains a
    /// QuotaSlice, CountQuotaSlice or CountConstrainedKnapsackSlice), and the
    /// errors of `cupel_slice`.
    unsafe fn cupel_find_min_budget(
        slicer: *const cupel_slicer,
        items: *const cupel_items,
        pinned_tokens: i64,
        target_index: usize,
        search_ceiling: i64,
        out_tokens: *mut i64,
    ) -> cupel_status {
        // SAFETY: `slicer`, `items`, `out_tokens` are NULL or valid as documented (the caller's promise).
        let (slicer, items, out) = unsafe {
            (
                arg_ref(slicer, "slicer")?,
                arg_ref(items, "items")?,
                Out::new(out_tokens, "out_tokens")?,
            )
        };
        let found = slicer.inner.find_min_budget(
            &items.inner,
            pinned_tokens,
            target_index,
            search_ceiling,
        )?;
        out.set(found.unwrap_or(-1));
        Ok(())
    }
}
