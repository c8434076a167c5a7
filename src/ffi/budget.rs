//! `cupel_budget`: the token budget.

use super::*;
use crate::budget::Budget;

/// Opaque handle: a token budget (ContextBudget). Create with
/// `cupel_budget_new`, free exactly once with `cupel_budget_free`.
pub struct cupel_budget {
    pub(crate) inner: Budget,
}

ffi_fn! {
    /// Creates a budget with `max_tokens` (hard ceiling) and `target_tokens`
    /// (the slicers' goal); output reserve 0, no reserved slots, safety margin 0.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (`max_tokens` < 0, `target_tokens` < 0, or `target_tokens` > `max_tokens`).
    unsafe fn cupel_budget_new(
        max_tokens: i64,
        target_tokens: i64,
        out: *mut *mut cupel_budget,
    ) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        let inner = Budget::new(max_tokens, target_tokens)?;
        hand_out(out, cupel_budget { inner });
        Ok(())
    }
}

ffi_fn! {
    /// Frees a budget. NULL is a no-op. Free each handle exactly once.
    unsafe fn cupel_budget_free(budget: *mut cupel_budget) {
        // SAFETY: NULL or a handle from its `_new` function, freed once (the caller's promise).
        unsafe { release(budget) }
    }
}

ffi_fn! {
    /// Sets the tokens kept free for the model's output (0 <= tokens <= max_tokens).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT. On error the
    /// budget is unchanged.
    unsafe fn cupel_budget_set_output_reserve(
        budget: *mut cupel_budget,
        tokens: i64,
    ) -> cupel_status {
        // SAFETY: `budget` is NULL or valid as documented (the caller's promise).
        let budget = unsafe { arg_mut(budget, "budget") }?;
        budget.inner.set_output_reserve(tokens)
    }
}

ffi_fn! {
    /// Sets the estimation safety margin in percent (finite, in [0, 100]); the
    /// effective budget is reduced by that share.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT. On error the
    /// budget is unchanged.
    unsafe fn cupel_budget_set_safety_margin(
        budget: *mut cupel_budget,
        percent: f64,
    ) -> cupel_status {
        // SAFETY: `budget` is NULL or valid as documented (the caller's promise).
        let budget = unsafe { arg_mut(budget, "budget") }?;
        budget.inner.set_safety_margin(percent)
    }
}

ffi_fn! {
    /// Sets the reserved slot of `kind` to `tokens` (>= 0); setting a kind again
    /// (in any letter case) replaces its value. Reserved tokens are taken off the
    /// effective budget.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`budget`, `kind`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (empty/whitespace/non-UTF-8 kind, tokens < 0).
    unsafe fn cupel_budget_reserve(
        budget: *mut cupel_budget,
        kind: *const c_char,
        tokens: i64,
    ) -> cupel_status {
        // SAFETY: `budget`, `kind` are NULL or valid as documented (the caller's promise).
        let (budget, kind) = unsafe {
            (
                arg_mut(budget, "budget")?,
                arg_str(kind, "kind")?,
            )
        };
        budget.inner.reserve(kind, tokens)
    }
}

ffi_fn! {
    /// COMPUTE-EFFECTIVE-BUDGET of the Slice stage: the max and target a slicer
    /// would get with `pinned_tokens` (>= 0) already committed. Exact for all
    /// inputs (no intermediate overflows); results are in [0, max_tokens].
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (pinned < 0).
    unsafe fn cupel_budget_effective(
        budget: *const cupel_budget,
        pinned_tokens: i64,
        out_max_tokens: *mut i64,
        out_target_tokens: *mut i64,
    ) -> cupel_status {
        // SAFETY: `budget`, `out_max_tokens`, `out_target_tokens` are NULL or valid as documented (the caller's promise).
        let (budget, out_max, out_target) = unsafe {
            (
                arg_ref(budget, "budget")?,
                Out::new(out_max_tokens, "out_max_tokens")?,
                Out::new(out_target_tokens, "out_target_tokens")?,
            )
        };
        let e = budget.inner.effective(pinned_tokens)?;
        out_max.set(e.max);
        out_target.set(e.target);
        Ok(())
    }
}
