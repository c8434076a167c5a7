//! Sessions (`../shared/abi-session.md`): item identity (keys, volatile
//! items) and `cupel_session`, cache-stable selection across turns. The
//! rules are in `crate::session` and docs/sessions.md.

use super::*;
use crate::items::Items;
use crate::session::{Action, Mark, Session};

/// Opaque handle: a session (its own copy of a pipeline, and what it
/// remembers of its last run). Create with `cupel_session_new`, free
/// exactly once with `cupel_session_free`. One thread at a time per
/// session; any number of sessions at once.
pub struct cupel_session {
    pub(crate) inner: Session,
}

/// Which rule a session run took (`cupel_session_last_action`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cupel_session_action {
    /// The first run, or the first after a reset (also before any run).
    CUPEL_SESSION_FIRST = 0,
    /// The previous output kept in its order; new items added at its end.
    CUPEL_SESSION_APPEND = 1,
    /// A fresh selection with room to spare, keeping what it could of the
    /// previous output's prefix.
    CUPEL_SESSION_COMPACT = 2,
}

pub use cupel_session_action::*;

/// What a cache breakpoint marks (`cupel_breakpoint.mark`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cupel_breakpoint_mark {
    /// After the leading pinned items (the system prompt, tool definitions).
    CUPEL_MARK_PINNED = 0,
    /// After the prefix the last compaction kept (it moves only when a
    /// compaction cuts earlier).
    CUPEL_MARK_COMPACTION = 1,
    /// After this run's stable prefix (`cupel_session_stable_prefix`).
    CUPEL_MARK_STABLE = 2,
    /// After the last non-volatile item: the prefix the next turn reuses
    /// when it appends, where a cache write pays off.
    CUPEL_MARK_END = 3,
}

pub use cupel_breakpoint_mark::*;

/// One cache breakpoint of a session run: after the first `items` items of
/// its output, which add `tokens` tokens; `mark` is a
/// `cupel_breakpoint_mark`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct cupel_breakpoint {
    pub items: usize,
    pub tokens: i64,
    pub mark: i32,
}

ffi_fn! {
    /// Gives item `index` an identity key for sessions: any non-zero
    /// number that names the same message, tool call or document from one
    /// turn's list to the next (0, the default, is no key). A keyed item is
    /// the same item as last turn when its key, tokens and content are the
    /// same; a keyless one when its kind, tokens and content are. Keys must
    /// be unique in a list for `cupel_session_run` (it fails naming both
    /// indices); `cupel_pipeline_run` ignores them.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range).
    unsafe fn cupel_items_set_key(items: *mut cupel_items, index: usize, key: u64) -> cupel_status {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        let items = unsafe { arg_mut(items, "items") }?;
        items.inner.set_key(index, key)
    }
}

ffi_fn! {
    /// Marks item `index` volatile (or not): expected to change every turn
    /// (the open file in an editor, this turn's retrieved documents). A
    /// session places every volatile item after every other item, so its
    /// changes never break the cached prefix. A group is volatile when any
    /// member is; an item with neither key nor content is treated as
    /// volatile. `cupel_pipeline_run` ignores it.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range).
    unsafe fn cupel_items_set_volatile(
        items: *mut cupel_items,
        index: usize,
        is_volatile: bool,
    ) -> cupel_status {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        let items = unsafe { arg_mut(items, "items") }?;
        items.inner.set_volatile(index, is_volatile)
    }
}

ffi_fn! {
    /// Bulk form of `cupel_items_set_key`: item `first + k` gets `keys[k]`
    /// for k < `count`. Duplicate keys are refused by the session run, not
    /// here.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (the
    /// range goes past the end; nothing is set).
    unsafe fn cupel_items_set_keys(
        items: *mut cupel_items,
        first: usize,
        count: usize,
        keys: *const u64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { set_column(items, first, count, keys, "keys", Items::set_key) }
    }
}

ffi_fn! {
    /// Bulk form of `cupel_items_set_volatile`: item `first + k` gets
    /// `is_volatile[k]` for k < `count`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (the
    /// range goes past the end; nothing is set).
    unsafe fn cupel_items_set_volatile_many(
        items: *mut cupel_items,
        first: usize,
        count: usize,
        is_volatile: *const bool,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { set_column(items, first, count, is_volatile, "is_volatile", Items::set_volatile) }
    }
}

ffi_fn! {
    /// Item `index`'s identity key (0: none).
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_key(items: *const cupel_items, index: usize, out_key: *mut u64) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_value(items, index, out_key, "out_key", |it, i| it.key(i)) }
    }
}

ffi_fn! {
    /// Whether item `index` was marked volatile (`cupel_items_set_volatile`).
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_volatile(
        items: *const cupel_items,
        index: usize,
        out_volatile: *mut bool,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_value(items, index, out_volatile, "out_volatile", |it, i| it.is_volatile(i)) }
    }
}

ffi_fn! {
    /// Creates a session over a copy of `pipeline` (the caller may free it
    /// right after; the session keeps working). The slack is 0.2
    /// (`cupel_session_set_slack`). Free with `cupel_session_free`.
    ///
    /// Each `cupel_session_run` gives the context for one turn, changing the
    /// previous turn's prompt only at its end whenever it can (docs/sessions.md):
    /// the first run is the pipeline's selection (volatile items last); later
    /// runs append new items after the previous output while everything
    /// fits, and otherwise compact once, with room to spare, keeping the
    /// longest prefix of the previous output that costs little score.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`pipeline`, `out`).
    unsafe fn cupel_session_new(
        pipeline: *const cupel_pipeline,
        out: *mut *mut cupel_session,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (pipeline, out) = unsafe { (arg_ref(pipeline, "pipeline")?, Out::new(out, "out")?) };
        hand_out(out, cupel_session { inner: Session::new(pipeline.inner.clone()) });
        Ok(())
    }
}

ffi_fn! {
    /// Frees a session. NULL is a no-op. Free each handle exactly once.
    unsafe fn cupel_session_free(session: *mut cupel_session) {
        // SAFETY: NULL or a handle from its `_new` function, freed once (the caller's promise).
        unsafe { release(session) }
    }
}

ffi_fn! {
    /// Sets the slack: the share of the effective target a compaction
    /// leaves free for the turns after it (its non-pinned, non-volatile
    /// items total at most floor((1 - fraction) x target)). The default,
    /// 0.2, is explained in docs/sessions.md from BENCHMARKS.md's figures.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`session`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (`fraction` outside [0, 1) or NaN; the
    /// session is unchanged).
    unsafe fn cupel_session_set_slack(session: *mut cupel_session, fraction: f64) -> cupel_status {
        // SAFETY: `session` is NULL or valid as documented (the caller's promise).
        let session = unsafe { arg_mut(session, "session") }?;
        session.inner.set_slack(fraction)
    }
}

ffi_fn! {
    /// The session's slack (`cupel_session_set_slack`).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`session`, `out_fraction`).
    unsafe fn cupel_session_slack(
        session: *const cupel_session,
        out_fraction: *mut f64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (session, out) =
            unsafe { (arg_ref(session, "session")?, Out::new(out_fraction, "out_fraction")?) };
        out.set(session.inner.slack());
        Ok(())
    }
}

ffi_fn! {
    /// One turn: the context's item indices in prompt order, with
    /// `cupel_pipeline_run`'s arguments and buffer rules; the output obeys
    /// every rule of the pipeline (budget, pinned items, groups, variants
    /// and truncation, overflow). The rule it took is
    /// `cupel_session_last_action`; the prefix unchanged since the last run
    /// is `cupel_session_stable_prefix`; where to put cache breakpoints is
    /// `cupel_session_breakpoints`. `report` may be NULL; if given it lists
    /// the output as included (in its order) and every other item with the
    /// pipeline's reason, or CUPEL_REASON_DEFERRED where the pipeline takes
    /// an item the session left out; its JSON has a top-level "session"
    /// object (action, stablePrefixItems, stablePrefixTokens, breakpoints).
    ///
    /// A failed run, CUPEL_ERROR_BUFFER_TOO_SMALL included, changes nothing:
    /// the next run behaves as if it never happened.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER; CUPEL_ERROR_INVALID_ARGUMENT (two
    /// items with the same non-zero key, both indices named; and
    /// `cupel_pipeline_run`'s); `cupel_pipeline_run`'s other errors.
    unsafe fn cupel_session_run(
        session: *mut cupel_session,
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
        let (session, items, budget, buf, out_len) = unsafe {
            (
                arg_mut(session, "session")?,
                arg_ref(items, "items")?,
                arg_ref(budget, "budget")?,
                OutBuf::new(out_indices, capacity, "out_indices")?,
                Out::new(out_len, "out_len")?,
            )
        };
        // Run on a copy: a run that fails (a buffer too small included)
        // leaves the session as it was.
        let mut next = session.inner.clone();
        let mut full = report.as_ref().map(|_| crate::pipeline::Report::default());
        let placed = next.run(&items.inner, &budget.inner, full.as_mut())?;
        buf.write_all(&placed, out_len, "out_indices", |i| i as usize)?;
        session.inner = next;
        if let (Some(r), Some(full)) = (report, full) {
            r.fill(full);
        }
        Ok(())
    }
}

ffi_fn! {
    /// The last run's stable prefix: how many leading items of its output
    /// (`out_items`) and their tokens (`out_tokens`) are identical, by
    /// identity and option, to the leading items of the run before it;
    /// where a host puts its cache breakpoint. 0 and 0 before any run,
    /// after a first run and after the first run that follows a reset.
    /// Either out-pointer may be NULL.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`session`).
    unsafe fn cupel_session_stable_prefix(
        session: *const cupel_session,
        out_items: *mut usize,
        out_tokens: *mut i64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let session = unsafe { arg_ref(session, "session") }?;
        let (n, t) = session.inner.stable_prefix();
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe {
            if let Some(o) = arg_opt_mut(out_items, "out_items")? {
                *o = n;
            }
            if let Some(o) = arg_opt_mut(out_tokens, "out_tokens")? {
                *o = t;
            }
        }
        Ok(())
    }
}

ffi_fn! {
    /// Forgets every run: the next run is a first run (its output is the
    /// pipeline's, its stable prefix 0). The slack stays.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`session`).
    unsafe fn cupel_session_reset(session: *mut cupel_session) -> cupel_status {
        // SAFETY: `session` is NULL or valid as documented (the caller's promise).
        let session = unsafe { arg_mut(session, "session") }?;
        session.inner.reset();
        Ok(())
    }
}

ffi_fn! {
    /// Which rule the last successful run took (CUPEL_SESSION_FIRST before
    /// any run and after a reset).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`session`, `out`).
    unsafe fn cupel_session_last_action(
        session: *const cupel_session,
        out: *mut cupel_session_action,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (session, out) = unsafe { (arg_ref(session, "session")?, Out::new(out, "out")?) };
        out.set(match session.inner.last_action() {
            Action::First => CUPEL_SESSION_FIRST,
            Action::Append => CUPEL_SESSION_APPEND,
            Action::Compact => CUPEL_SESSION_COMPACT,
        });
        Ok(())
    }
}

ffi_fn! {
    /// The last run's cache breakpoints (providers allow up to four per
    /// request), ascending and distinct, at most 4 (a buffer of 4 always
    /// suffices): after the leading pinned items (CUPEL_MARK_PINNED), after
    /// the prefix the last compaction kept (CUPEL_MARK_COMPACTION), after
    /// the stable prefix (CUPEL_MARK_STABLE) and after the last non-volatile
    /// item (CUPEL_MARK_END); a position at 0 items is left out, and where
    /// two fall together one is written, with the later mark of that list.
    /// None before any run. Buffer rules as in `cupel_slice`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`session`, `out_len`; `out` when
    /// `capacity` > 0), CUPEL_ERROR_BUFFER_TOO_SMALL.
    unsafe fn cupel_session_breakpoints(
        session: *const cupel_session,
        out: *mut cupel_breakpoint,
        capacity: usize,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (session, buf, out_len) = unsafe {
            (
                arg_ref(session, "session")?,
                OutBuf::new(out, capacity, "out")?,
                Out::new(out_len, "out_len")?,
            )
        };
        buf.write_all(session.inner.breakpoints(), out_len, "breakpoints", |b| cupel_breakpoint {
            items: b.items,
            tokens: b.tokens,
            mark: match b.mark {
                Mark::Pinned => CUPEL_MARK_PINNED,
                Mark::Compaction => CUPEL_MARK_COMPACTION,
                Mark::Stable => CUPEL_MARK_STABLE,
                Mark::End => CUPEL_MARK_END,
            } as i32,
        })
    }
}
