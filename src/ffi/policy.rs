//! Policies as data, presets, sensitivity, analytics and tracing
//! (`abi-policy.md`): thin wrappers over `crate::policy`,
//! `crate::analytics` and `crate::trace`.

use std::ffi::c_void;
use std::sync::Arc;

use super::*;
use crate::policy;
use crate::trace::{Event, Hook, Kind, Level};

/// The JSON text argument `json[0 .. len)` as bytes (the reader checks its
/// UTF-8 and says where it breaks).
unsafe fn json_arg<'a>(json: *const c_char, len: usize) -> Result<&'a [u8]> {
    // A NULL document is no document, whatever its length.
    check_ptr(json, "json")?;
    // SAFETY: the caller's promise, passed on.
    unsafe { arg_slice(json as *const u8, len, "json") }
}

/// A reader's error naming the argument: `json $.path: rule`.
fn named_json(e: Error) -> Error {
    e.map_message(|m| match m.starts_with('$') {
        true => format!("json {m}"),
        false => m.to_string(),
    })
}

ffi_fn! {
    /// Reads a policy document (JSON, `json[0 .. len)`, UTF-8) into a new
    /// pipeline: the .NET Cupel policy format (`scorers`, `slicerType`,
    /// `placerType`, `deduplicationEnabled`, `overflowStrategy`,
    /// `knapsackBucketSize`, `streamBatchSize`, `quotas`, `name`,
    /// `description`) and libcupel's extensions (scorer types `given`,
    /// `decay`, `metadataTrust`, `metadataKey`, `composite`; `slicerType`
    /// `"countConstrainedKnapsack"`, `countQuotas`, `scarcity`;
    /// `placerType` `"none"`; `tokenizer`; `sessionSlack`;
    /// `memoryLimitBytes`), as docs/policies.md and
    /// `schema/policy.schema.json` describe. Keys are case-sensitive, enum
    /// values case-insensitive; unknown keys are ignored; a key absent or
    /// null takes its default. Free the pipeline with `cupel_pipeline_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`json`, `out`);
    /// CUPEL_ERROR_INVALID_ARGUMENT with the JSON path and the rule
    /// (`json $.scorers[1].weight: must be positive and finite (got
    /// -0.5)`), for
    /// empty input, `null`, malformed JSON (line and column) and invalid
    /// UTF-8 too.
    unsafe fn cupel_pipeline_from_json(
        json: *const c_char,
        len: usize,
        out: *mut *mut cupel_pipeline,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (bytes, out) = unsafe { (json_arg(json, len)?, Out::new(out, "out")?) };
        let inner = policy::pipeline_from_json(bytes).map_err(named_json)?;
        hand_out(out, cupel_pipeline { inner });
        Ok(())
    }
}

ffi_fn! {
    /// Writes `pipeline` as a policy document (UTF-8 JSON, every setting
    /// written), such that `cupel_pipeline_from_json` of it gives a pipeline
    /// that selects exactly as this one. Buffer rules as in
    /// `cupel_report_json` (`buf` NULL with `capacity` 0 asks for the
    /// length; a NUL follows the text when it fits).
    ///
    /// Pipelines that cannot be written fail with CUPEL_ERROR_UNSUPPORTED
    /// rather than give a lossy file: a slicer nested other than count
    /// quotas around quotas around greedy, knapsack or stream (a QuotaSlice
    /// around a count quota, say); a tokenizer loaded from a vocabulary file.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_UNSUPPORTED,
    /// CUPEL_ERROR_BUFFER_TOO_SMALL.
    unsafe fn cupel_pipeline_to_json(
        pipeline: *const cupel_pipeline,
        buf: *mut c_char,
        capacity: usize,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (pipeline, buf, out_len) = unsafe {
            (
                arg_ref(pipeline, "pipeline")?,
                OutBuf::new(buf, capacity, "buf")?,
                Out::new(out_len, "out_len")?,
            )
        };
        let text = policy::pipeline_to_json(&pipeline.inner)?;
        buf.write_text(text.as_bytes(), out_len, "buf")
    }
}

ffi_fn! {
    /// Reads a budget document (JSON, `json[0 .. len)`): `maxTokens` and
    /// `targetTokens` (required), `outputReserve`, `reservedSlots` (an
    /// object kind -> tokens), `estimationSafetyMarginPercent`, validated as
    /// `cupel_budget_new` and its setters validate. Free the budget with
    /// `cupel_budget_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`json`, `out`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (with the JSON path).
    unsafe fn cupel_budget_from_json(
        json: *const c_char,
        len: usize,
        out: *mut *mut cupel_budget,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (bytes, out) = unsafe { (json_arg(json, len)?, Out::new(out, "out")?) };
        let inner = policy::budget_from_json(bytes).map_err(named_json)?;
        hand_out(out, cupel_budget { inner });
        Ok(())
    }
}

ffi_fn! {
    /// Writes `budget` as a budget document (every field; reserved kinds as
    /// compared, lower-cased). Buffer rules as in `cupel_pipeline_to_json`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_BUFFER_TOO_SMALL.
    unsafe fn cupel_budget_to_json(
        budget: *const cupel_budget,
        buf: *mut c_char,
        capacity: usize,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (budget, buf, out_len) = unsafe {
            (
                arg_ref(budget, "budget")?,
                OutBuf::new(buf, capacity, "buf")?,
                Out::new(out_len, "out_len")?,
            )
        };
        let text = policy::budget_to_json(&budget.inner);
        buf.write_text(text.as_bytes(), out_len, "buf")
    }
}

ffi_fn! {
    /// Builds a preset pipeline by name (ASCII case-insensitive): the .NET
    /// presets "Chat", "CodeReview", "Rag", "DocumentQa", "ToolUse",
    /// "LongRunning", "Debugging" (their scorers and weights, slicer, placer
    /// and bucket size; deduplication on, overflow "throw"), and libcupel's
    /// "AgentLoop" (docs/policies.md). Free with `cupel_pipeline_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`name`, `out`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (no such preset; the message lists them).
    unsafe fn cupel_pipeline_preset(name: *const c_char, out: *mut *mut cupel_pipeline) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (name, out) = unsafe { (arg_str(name, "name")?, Out::new(out, "out")?) };
        let inner = policy::presets::preset(name)?;
        hand_out(out, cupel_pipeline { inner });
        Ok(())
    }
}

ffi_fn! {
    /// The name of the pipeline's tokenizer ("o200k_base" or
    /// "cl100k_base"), a static NUL-terminated string; NULL when it has
    /// none, one loaded from a vocabulary file, or `pipeline` is NULL.
    unsafe fn cupel_pipeline_tokenizer_name(pipeline: *const cupel_pipeline) -> *const c_char [std::ptr::null()] {
        // SAFETY: `pipeline` is NULL or valid as documented (the caller's promise).
        let Ok(pipeline) = (unsafe { arg_ref(pipeline, "pipeline") }) else {
            return std::ptr::null();
        };
        match pipeline.inner.tokenizer.as_ref().and_then(|t| t.name()) {
            Some("o200k_base") => c"o200k_base".as_ptr(),
            Some("cl100k_base") => c"cl100k_base".as_ptr(),
            _ => std::ptr::null(),
        }
    }
}

ffi_fn! {
    /// How many presets `cupel_pipeline_preset` knows.
    fn cupel_preset_count() -> usize [0] {
        policy::presets::NAMES.len()
    }
}

ffi_fn! {
    /// The name of preset `index` (0 .. `cupel_preset_count()`), a static
    /// NUL-terminated string; NULL for an index out of range.
    fn cupel_preset_name(index: usize) -> *const c_char [std::ptr::null()] {
        const NAMES: [&CStr; 8] = [
            c"Chat",
            c"CodeReview",
            c"Rag",
            c"DocumentQa",
            c"ToolUse",
            c"LongRunning",
            c"Debugging",
            c"AgentLoop",
        ];
        NAMES.get(index).map_or(std::ptr::null(), |n| n.as_ptr())
    }
}

ffi_fn! {
    /// Policy sensitivity: runs each of `pipelines[0 .. count)` on the same
    /// `items` and `budget` and writes JSON (buffer rules as in
    /// `cupel_report_json`): `{"variants": [{"label", "report"}], "diffs":
    /// [{"index", "content", "statuses": [{"label", "status"}]}]}`. `report`
    /// is that run's SelectionReport JSON; `diffs` lists every item
    /// included by at least one pipeline and excluded by another, by push
    /// `index` in push order, with its `content` when set and its status
    /// ("Included" or "Excluded") under each label. Items are matched by
    /// push index, never by content. The pipelines run on every call; the
    /// text depends on the inputs only (the reports' stage durations are
    /// written as 0), so a second call with the length the first asked for
    /// fits.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (any argument, any pipeline or
    /// label); CUPEL_ERROR_INVALID_ARGUMENT (`count` < 2; a label that is
    /// not UTF-8); a pipeline's run error, its message naming the variant's
    /// index and label; CUPEL_ERROR_BUFFER_TOO_SMALL.
    unsafe fn cupel_policy_sensitivity(
        pipelines: *const *const cupel_pipeline,
        labels: *const *const c_char,
        count: usize,
        items: *const cupel_items,
        budget: *const cupel_budget,
        buf: *mut c_char,
        capacity: usize,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (ps, ls, items, budget, buf, out_len) = unsafe {
            (
                arg_slice(pipelines, count, "pipelines")?,
                arg_slice(labels, count, "labels")?,
                arg_ref(items, "items")?,
                arg_ref(budget, "budget")?,
                OutBuf::new(buf, capacity, "buf")?,
                Out::new(out_len, "out_len")?,
            )
        };
        let mut variants = Vec::with_capacity(count);
        for (k, (&p, &l)) in ps.iter().zip(ls).enumerate() {
            // SAFETY: each element is NULL or valid as documented (the caller's promise).
            let (p, l) = unsafe {
                (
                    arg_ref(p, &format!("pipelines[{k}]"))?,
                    arg_str(l, &format!("labels[{k}]"))?,
                )
            };
            variants.push((l, &p.inner));
        }
        let result = crate::analytics::sensitivity(&variants, &items.inner, &budget.inner)?;
        let text = result.json(&items.inner).to_string();
        buf.write_text(text.as_bytes(), out_len, "buf")
    }
}

ffi_fn! {
    /// Budget utilization of a pipeline run's report: the included tokens
    /// (as they go into the context) over the run's budget's `max_tokens`;
    /// 0 when `max_tokens` is 0 or the report is empty.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER.
    unsafe fn cupel_report_budget_utilization(report: *const cupel_report, out: *mut f64) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (report, out) = unsafe { (arg_ref(report, "report")?, Out::new(out, "out")?) };
        out.set(crate::analytics::budget_utilization(&report.report));
        Ok(())
    }
}

ffi_fn! {
    /// Kind diversity: the number of distinct kinds among the included
    /// items, compared as kinds are (ASCII case-insensitively). `items` is
    /// the list the report was made from.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (the
    /// report names an item `items` does not hold).
    unsafe fn cupel_report_kind_diversity(
        report: *const cupel_report,
        items: *const cupel_items,
        out: *mut usize,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (report, items, out) = unsafe {
            (
                arg_ref(report, "report")?,
                arg_ref(items, "items")?,
                Out::new(out, "out")?,
            )
        };
        out.set(crate::analytics::kind_diversity(&report.report, &items.inner)?);
        Ok(())
    }
}

ffi_fn! {
    /// Timestamp coverage: the share of included items that have a
    /// timestamp, in [0, 1]; 0 when none is included. `items` is the list
    /// the report was made from.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (the
    /// report names an item `items` does not hold).
    unsafe fn cupel_report_timestamp_coverage(
        report: *const cupel_report,
        items: *const cupel_items,
        out: *mut f64,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (report, items, out) = unsafe {
            (
                arg_ref(report, "report")?,
                arg_ref(items, "items")?,
                Out::new(out, "out")?,
            )
        };
        out.set(crate::analytics::timestamp_coverage(&report.report, &items.inner)?);
        Ok(())
    }
}

/// How much a trace carries (`cupel_pipeline_set_trace`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cupel_trace_level {
    /// One event per stage, and the pipeline's.
    CUPEL_TRACE_STAGES = 0,
    /// + one per excluded item.
    CUPEL_TRACE_EXCLUSIONS = 1,
    /// + one per included item.
    CUPEL_TRACE_FULL = 2,
}

/// What a trace event is about.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cupel_trace_event_kind {
    /// The `cupel.pipeline` span: sent last, spanning the run.
    CUPEL_TRACE_EVENT_PIPELINE = 0,
    /// A `cupel.stage.<stage>` span, child of the pipeline's.
    CUPEL_TRACE_EVENT_STAGE = 1,
    /// A `cupel.exclusion` event on its stage's span.
    CUPEL_TRACE_EVENT_EXCLUSION = 2,
    /// A `cupel.item.included` event on the place stage's span.
    CUPEL_TRACE_EVENT_INCLUDED = 3,
}

pub use cupel_trace_event_kind::*;
pub use cupel_trace_level::*;

/// One trace event (`cupel_pipeline_set_trace`). Pointers are valid only
/// during the callback; strings are static and NUL-terminated except
/// `item_kind` (`item_kind_len` bytes, UTF-8, no NUL). Never content or
/// metadata. Per run, in order: each stage's event (classify, score,
/// deduplicate, slice, place) followed by its exclusion events, the place
/// stage's also by the included items' events, and the pipeline's last.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cupel_trace_event {
    pub kind: cupel_trace_event_kind,
    /// The span or event name: "cupel.pipeline", "cupel.stage.classify"
    /// (.score, .deduplicate, .slice, .place), "cupel.exclusion" or
    /// "cupel.item.included".
    pub name: *const c_char,
    /// The stage, lowercase ("classify", ...); NULL for the pipeline.
    pub stage: *const c_char,
    /// The tier name for `cupel.verbosity`: "StageOnly",
    /// "StageAndExclusions" or "Full".
    pub verbosity: *const c_char,
    /// Stage: `cupel.stage.item_count_in` / `_out`; pipeline: the items in
    /// and the items included.
    pub item_count_in: usize,
    pub item_count_out: usize,
    /// Stage: `cupel.exclusion.count`; pipeline: all exclusions.
    pub exclusion_count: usize,
    /// Exclusion, included: the item's push index.
    pub item: usize,
    /// Exclusion: a `cupel_reason`; -1 otherwise.
    pub reason: i32,
    /// Exclusion: `cupel.exclusion.reason`, the reason's name
    /// ("BudgetExceeded"); NULL otherwise.
    pub reason_name: *const c_char,
    /// Exclusion, included: `cupel.exclusion.item_kind` /
    /// `cupel.item.kind` (`item_kind_len` bytes).
    pub item_kind: *const c_char,
    pub item_kind_len: usize,
    /// Exclusion: `cupel.exclusion.item_tokens`; included:
    /// `cupel.item.tokens` (the tokens it adds to the context).
    pub tokens: i64,
    /// Included: `cupel.item.score`.
    pub score: f64,
    /// Pipeline: `cupel.budget.max_tokens`.
    pub max_tokens: i64,
    /// Start in nanoseconds since the Unix epoch (0 in the WebAssembly
    /// build, which has no clock) and duration in nanoseconds (0 for
    /// events).
    pub start_unix_nanos: u64,
    pub duration_nanos: u64,
}

/// The trace callback: `user_data` as given to `cupel_pipeline_set_trace`,
/// and the event (valid during the call only).
pub type cupel_trace_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, event: *const cupel_trace_event)>;

fn stage_names(s: crate::pipeline::report::Stage) -> (&'static CStr, &'static CStr) {
    use crate::pipeline::report::Stage;
    match s {
        Stage::Classify => (c"cupel.stage.classify", c"classify"),
        Stage::Score => (c"cupel.stage.score", c"score"),
        Stage::Deduplicate => (c"cupel.stage.deduplicate", c"deduplicate"),
        Stage::Slice => (c"cupel.stage.slice", c"slice"),
        Stage::Place => (c"cupel.stage.place", c"place"),
    }
}

/// The reason names as C strings, by `Reason::ALL` position.
fn reason_name(r: crate::pipeline::Reason) -> &'static CStr {
    use crate::pipeline::Reason::*;
    match r {
        Scored => c"Scored",
        Pinned => c"Pinned",
        ZeroToken => c"ZeroToken",
        Variant => c"Variant",
        Truncated => c"Truncated",
        BudgetExceeded => c"BudgetExceeded",
        ScoredTooLow => c"ScoredTooLow",
        Deduplicated => c"Deduplicated",
        QuotaCapExceeded => c"QuotaCapExceeded",
        QuotaRequireDisplaced => c"QuotaRequireDisplaced",
        NegativeTokens => c"NegativeTokens",
        PinnedOverride => c"PinnedOverride",
        Filtered => c"Filtered",
        CountCapExceeded => c"CountCapExceeded",
        Deferred => c"Deferred",
    }
}

fn c_event(e: &Event<'_>) -> cupel_trace_event {
    let (name, stage) = match (e.kind, e.stage) {
        (Kind::Pipeline, _) | (_, None) => (c"cupel.pipeline", None),
        (Kind::Stage, Some(s)) => (stage_names(s).0, Some(stage_names(s).1)),
        (Kind::Exclusion, Some(s)) => (c"cupel.exclusion", Some(stage_names(s).1)),
        (Kind::Included, Some(s)) => (c"cupel.item.included", Some(stage_names(s).1)),
    };
    let verbosity = match e.level {
        Level::Stages => c"StageOnly",
        Level::Exclusions => c"StageAndExclusions",
        Level::Full => c"Full",
    };
    cupel_trace_event {
        kind: match e.kind {
            Kind::Pipeline => CUPEL_TRACE_EVENT_PIPELINE,
            Kind::Stage => CUPEL_TRACE_EVENT_STAGE,
            Kind::Exclusion => CUPEL_TRACE_EVENT_EXCLUSION,
            Kind::Included => CUPEL_TRACE_EVENT_INCLUDED,
        },
        name: name.as_ptr(),
        stage: stage.map_or(std::ptr::null(), CStr::as_ptr),
        verbosity: verbosity.as_ptr(),
        item_count_in: e.item_count_in,
        item_count_out: e.item_count_out,
        exclusion_count: e.exclusion_count,
        item: e.item as usize,
        reason: e.reason.map_or(-1, |r| r as i32),
        reason_name: e
            .reason
            .map_or(std::ptr::null(), |r| reason_name(r).as_ptr()),
        item_kind: e.item_kind.as_ptr() as *const c_char,
        item_kind_len: e.item_kind.len(),
        tokens: e.tokens,
        score: e.score,
        max_tokens: e.max_tokens,
        start_unix_nanos: e.start_unix_nanos,
        duration_nanos: e.duration_nanos,
    }
}

ffi_fn! {
    /// Traces the pipeline's runs: during each successful
    /// `cupel_pipeline_run` (and session run) with this pipeline,
    /// `callback(user_data, event)` is called on the running thread for
    /// every event of `level` (a `cupel_trace_level`, taken as `int`), in
    /// the order `cupel_trace_event` gives. `callback` NULL turns tracing
    /// off; a traced run costs a report's bookkeeping, an untraced one
    /// nothing. The callback must not call into the same pipeline, must
    /// not unwind (throw) through the library, and must be safe to call
    /// from every thread that runs the pipeline. A failed run sends
    /// nothing. Copies of the pipeline (sessions) keep the trace set when
    /// they were made.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`pipeline`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (an unknown level; nothing changes).
    unsafe fn cupel_pipeline_set_trace(
        pipeline: *mut cupel_pipeline,
        level: std::ffi::c_int,
        callback: cupel_trace_fn,
        user_data: *mut c_void,
    ) -> cupel_status {
        // SAFETY: `pipeline` is NULL or valid as documented (the caller's promise).
        let pipeline = unsafe { arg_mut(pipeline, "pipeline") }?;
        let level = match level {
            0 => Level::Stages,
            1 => Level::Exclusions,
            2 => Level::Full,
            v => {
                return Err(Error::InvalidArgument(format!(
                    "level is {v}; expected CUPEL_TRACE_STAGES (0), CUPEL_TRACE_EXCLUSIONS (1) \
                     or CUPEL_TRACE_FULL (2)"
                )))
            }
        };
        let Some(f) = callback else {
            pipeline.inner.trace = None;
            return Ok(());
        };
        // The host's pointer, carried as an integer: the host promised the
        // callback is safe to call from any thread that runs the pipeline.
        let user = user_data as usize;
        let callback = move |e: &Event<'_>| {
            let event = c_event(e);
            // SAFETY: the host's callback with the host's pointer and an
            // event that lives for the call, as documented.
            unsafe { f(user as *mut c_void, &event) }
        };
        pipeline.inner.trace = Some(Hook {
            level,
            callback: Arc::new(callback),
        });
        Ok(())
    }
}
