//! `cupel_pipeline`: all six stages in one call.

use super::*;
use crate::pipeline::{Engine, Overflow, Pipeline};

/// Opaque handle: a configured pipeline (scorer, slicer, placer,
/// deduplication, overflow strategy). Create with `cupel_pipeline_new`,
/// free exactly once with `cupel_pipeline_free`.
pub struct cupel_pipeline {
    pub(crate) inner: Pipeline,
}

/// What `cupel_pipeline_run` does when pinned plus sliced items exceed the
/// budget's target.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cupel_overflow {
    /// Fail with CUPEL_ERROR_OVERFLOW (the default).
    CUPEL_OVERFLOW_THROW = 0,
    /// Keep the pinned items, then the others in merged order while they
    /// fit; the dropped ones are reported (BudgetExceeded, or
    /// PinnedOverride when only the pinned items kept them out).
    CUPEL_OVERFLOW_TRUNCATE = 1,
    /// Keep everything, over the target.
    CUPEL_OVERFLOW_PROCEED = 2,
}

pub use cupel_overflow::*;

ffi_fn! {
    /// Creates a pipeline over copies of `scorer` (NULL: the scores pushed
    /// with the items), `slicer` and `placer` (NULL: the slicer's output
    /// order, pinned items first); the caller may free them right after.
    /// Deduplication is on, the overflow strategy CUPEL_OVERFLOW_THROW.
    /// Free with `cupel_pipeline_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`slicer`, `out`).
    unsafe fn cupel_pipeline_new(
        scorer: *const cupel_scorer,
        slicer: *const cupel_slicer,
        placer: *const cupel_placer,
        out: *mut *mut cupel_pipeline,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (scorer, slicer, placer, out) = unsafe {
            (
                arg_opt_ref(scorer, "scorer")?,
                arg_ref(slicer, "slicer")?,
                arg_opt_ref(placer, "placer")?,
                Out::new(out, "out")?,
            )
        };
        let engine: Engine = slicer.inner.clone();
        let inner = Pipeline::new(
            scorer.map(|s| s.inner.clone()),
            engine,
            placer.map(|p| p.inner),
        );
        hand_out(out, cupel_pipeline { inner });
        Ok(())
    }
}

ffi_fn! {
    /// Turns the Deduplicate stage on (the default) or off.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`pipeline`).
    unsafe fn cupel_pipeline_set_deduplication(
        pipeline: *mut cupel_pipeline,
        enabled: bool,
    ) -> cupel_status {
        // SAFETY: `pipeline` is NULL or valid as documented (the caller's promise).
        let pipeline = unsafe { arg_mut(pipeline, "pipeline") }?;
        pipeline.inner.deduplication = enabled;
        Ok(())
    }
}

ffi_fn! {
    /// Sets the overflow strategy (a `cupel_overflow`, taken as `int` so
    /// that any number is safe).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`pipeline`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (an unknown strategy; the pipeline is
    /// unchanged).
    unsafe fn cupel_pipeline_set_overflow(
        pipeline: *mut cupel_pipeline,
        strategy: std::ffi::c_int,
    ) -> cupel_status {
        // SAFETY: `pipeline` is NULL or valid as documented (the caller's promise).
        let pipeline = unsafe { arg_mut(pipeline, "pipeline") }?;
        pipeline.inner.overflow = match strategy {
            0 => Overflow::Throw,
            1 => Overflow::Truncate,
            2 => Overflow::Proceed,
            v => {
                return Err(crate::Error::InvalidArgument(format!(
                    "strategy is {v}; expected CUPEL_OVERFLOW_THROW (0), \
                     CUPEL_OVERFLOW_TRUNCATE (1) or CUPEL_OVERFLOW_PROCEED (2)"
                )))
            }
        };
        Ok(())
    }
}

ffi_fn! {
    /// Frees a pipeline. NULL is a no-op. Free each handle exactly once.
    unsafe fn cupel_pipeline_free(pipeline: *mut cupel_pipeline) {
        // SAFETY: NULL or a handle from its `_new` function, freed once (the caller's promise).
        unsafe { release(pipeline) }
    }
}

ffi_fn! {
    /// Runs all six stages (Classify, Score, Deduplicate, Sort, Slice,
    /// Place) over `items` with `budget`, and writes the final context's
    /// item indices, pinned items included, in placed order. Pinned items
    /// and their tokens come from the items (`cupel_items_set_pinned`).
    /// Output buffer rules as in `cupel_slice`. `report` may be NULL; if
    /// given it receives every item's decision (left empty on failure).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER; CUPEL_ERROR_INVALID_ARGUMENT (the
    /// pinned items alone need more than max_tokens - output_reserve: the
    /// spec's Classify error); CUPEL_ERROR_OVERFLOW (pinned plus sliced
    /// items exceed target_tokens with CUPEL_OVERFLOW_THROW);
    /// CUPEL_ERROR_BUFFER_TOO_SMALL; and the slicer's errors
    /// (CUPEL_ERROR_SCARCITY, CUPEL_ERROR_CAPACITY).
    ///
    /// Thread safety: any number of threads may run the same pipeline on
    /// the same items and budget concurrently, each with its own report.
    unsafe fn cupel_pipeline_run(
        pipeline: *const cupel_pipeline,
        items: *const cupel_items,
        budget: *const cupel_budget,
        out_indices: *mut usize,
        capacity: usize,
        out_len: *mut usize,
        report: *mut cupel_report,
    ) -> cupel_status {
        // SAFETY: `report` is NULL or valid as documented (the caller's promise).
        let report = unsafe { report_arg(report) }?;
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (pipeline, items, budget, buf, out_len) = unsafe {
            (
                arg_ref(pipeline, "pipeline")?,
                arg_ref(items, "items")?,
                arg_ref(budget, "budget")?,
                OutBuf::new(out_indices, capacity, "out_indices")?,
                Out::new(out_len, "out_len")?,
            )
        };
        let mut full = report.as_ref().map(|_| crate::pipeline::Report::default());
        let placed = pipeline.inner.run(&items.inner, &budget.inner, full.as_mut())?;
        buf.write_all(&placed, out_len, "out_indices", |i| i as usize)?;
        if let (Some(r), Some(full)) = (report, full) {
            r.fill(full);
        }
        Ok(())
    }
}
