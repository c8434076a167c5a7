//! Items that shrink instead of vanish (`../shared/abi-text.md`): variants,
//! truncatable items, the pipeline's tokenizer, and what a report says was
//! chosen.

use super::*;
use crate::items::Truncatable;
use crate::pipeline::Decision;

ffi_fn! {
    /// Adds a variant to item `index`: a smaller stand-in (a summary, a
    /// digest, a placeholder such as "[tool output cleared]") that
    /// selection may take instead of the item. Variants are numbered 1, 2,
    /// ... in the order added (variant 0 is the item as pushed); selection
    /// takes at most one option of an item.
    ///
    /// `tokens` (>= 0; may be more than the item's) is what the variant
    /// adds to the context; `value` in (0, 1] is the share of the item's
    /// score it keeps (its score is the item's times `value`; KnapsackSlice
    /// values it `floor(score x value x 10000)`); `content` (NUL-terminated
    /// UTF-8, not empty) is its text, or NULL for none. An item has at most
    /// 255 variants. A variant of an item pushed with 0 tokens is never
    /// chosen (such an item is always included as pushed), nor of a pinned
    /// one. A variant of a grouped item gives its group an option per
    /// variant number `v`: every member at its variant `v` when it has
    /// one, else as pushed. Deduplication compares the items' own content.
    /// `cupel_slice` and the pipeline honour variants in every slicer but
    /// StreamSlice (a stream has no item list): see docs/variants.md.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range, `tokens` < 0, `value` outside (0, 1] or NaN,
    /// `content` empty or not UTF-8, a 256th variant). On error the list
    /// is unchanged.
    unsafe fn cupel_items_add_variant(
        items: *mut cupel_items,
        index: usize,
        tokens: i64,
        value: f64,
        content: *const c_char,
    ) -> cupel_status {
        // SAFETY: `items`, `content` are NULL or valid as documented (the caller's promise).
        let (items, content) =
            unsafe { (arg_mut(items, "items")?, arg_opt_str(content, "content")?) };
        items.inner.add_variant(index, tokens, value, content).map(|_| ())
    }
}

ffi_fn! {
    /// Makes item `index` truncatable: a pipeline run (with a tokenizer,
    /// `cupel_pipeline_set_tokenizer`) may include it cut down by
    /// `cupel_tokenizer_truncate` with `keep` (a `cupel_keep`, taken as
    /// `int`) to fill what the slicer left; its score then scales by the
    /// kept share of its tokens. After the slicer, while the tokens left
    /// (the effective target minus the tokens of everything included) reach
    /// the `min_tokens` of a truncatable candidate that was not selected,
    /// the one among them with the highest score per token (of its full
    /// tokens; ties: push order) is cut with `max_tokens` = the tokens left
    /// and included if what is kept still counts at least `min_tokens`
    /// (else it is passed over). The item needs content (the run fails
    /// naming the item otherwise). A pinned item, a member of a group and
    /// an item a count cap excluded are never cut; `cupel_slice` does not
    /// cut (it has no tokenizer).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range, an unknown `keep`, `min_tokens` < 0). On
    /// error the list is unchanged.
    unsafe fn cupel_items_set_truncatable(
        items: *mut cupel_items,
        index: usize,
        keep: std::ffi::c_int,
        min_tokens: i64,
    ) -> cupel_status {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        let items = unsafe { arg_mut(items, "items") }?;
        let keep = keep_of(keep)?;
        items.inner.set_truncatable(index, Some(Truncatable { keep, min_tokens }))
    }
}

ffi_fn! {
    /// Makes item `index` no longer truncatable (a no-op if it was not).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range).
    unsafe fn cupel_items_clear_truncatable(items: *mut cupel_items, index: usize) -> cupel_status {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        let items = unsafe { arg_mut(items, "items") }?;
        items.inner.set_truncatable(index, None)
    }
}

ffi_fn! {
    /// The number of variants of item `index`, into `*out_count`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`, `out_count`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (`index` out of range).
    unsafe fn cupel_items_variant_count(
        items: *const cupel_items,
        index: usize,
        out_count: *mut usize,
    ) -> cupel_status {
        // SAFETY: `items`, `out_count` are NULL or valid as documented (the caller's promise).
        let (items, out) = unsafe { (arg_ref(items, "items")?, Out::new(out_count, "out_count")?) };
        let i = items.inner.at(index)?;
        out.set(items.inner.variants(i).len());
        Ok(())
    }
}

ffi_fn! {
    /// Variant `variant` (1 .. `cupel_items_variant_count`) of item
    /// `index`: its tokens, value and content (a pointer into the list and
    /// a length, not NUL-terminated, valid until the list next changes;
    /// NULL and 0 when it has none). `out_content` and `out_content_len`
    /// may be NULL together to skip the content.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`, `out_tokens`, `out_value`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (`index` or `variant` out of range).
    unsafe fn cupel_items_variant(
        items: *const cupel_items,
        index: usize,
        variant: usize,
        out_tokens: *mut i64,
        out_value: *mut f64,
        out_content: *mut *const c_char,
        out_content_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: every pointer is NULL or valid as documented (the caller's promise).
        let (items, tokens, value) = unsafe {
            (
                arg_ref(items, "items")?,
                Out::new(out_tokens, "out_tokens")?,
                Out::new(out_value, "out_value")?,
            )
        };
        let i = items.inner.at(index)?;
        let list = items.inner.variants(i);
        let Some(v) = variant.checked_sub(1).and_then(|k| list.get(k)) else {
            return Err(Error::InvalidArgument(format!(
                "variant {variant} is out of range: item {index} has {} variants, numbered from 1",
                list.len()
            )));
        };
        tokens.set(v.tokens);
        value.set(v.value);
        if !out_content.is_null() || !out_content_len.is_null() {
            // SAFETY: as above.
            let (content, len) = unsafe {
                (
                    Out::new(out_content, "out_content")?,
                    Out::new(out_content_len, "out_content_len")?,
                )
            };
            match v.content.as_deref() {
                Some(s) => {
                    content.set(s.as_ptr() as *const c_char);
                    len.set(s.len());
                }
                None => {
                    content.set(std::ptr::null());
                    len.set(0);
                }
            }
        }
        Ok(())
    }
}

ffi_fn! {
    /// Whether item `index` is truncatable, and if so its `keep` (a
    /// `cupel_keep`) and `min_tokens` (both 0 when it is not).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (any argument),
    /// CUPEL_ERROR_INVALID_ARGUMENT (`index` out of range).
    unsafe fn cupel_items_truncatable(
        items: *const cupel_items,
        index: usize,
        out_truncatable: *mut bool,
        out_keep: *mut std::ffi::c_int,
        out_min_tokens: *mut i64,
    ) -> cupel_status {
        // SAFETY: every pointer is NULL or valid as documented (the caller's promise).
        let (items, is, keep, min) = unsafe {
            (
                arg_ref(items, "items")?,
                Out::new(out_truncatable, "out_truncatable")?,
                Out::new(out_keep, "out_keep")?,
                Out::new(out_min_tokens, "out_min_tokens")?,
            )
        };
        let t = items.inner.truncatable(items.inner.at(index)?);
        is.set(t.is_some());
        keep.set(t.map_or(0, |t| t.keep as std::ffi::c_int));
        min.set(t.map_or(0, |t| t.min_tokens));
        Ok(())
    }
}

ffi_fn! {
    /// Gives the pipeline a tokenizer (the pipeline keeps its own
    /// reference; the caller may free `tokenizer` afterwards), which it
    /// uses to cut truncatable items (`cupel_items_set_truncatable`). NULL
    /// removes it. A run with a truncatable item and no tokenizer fails
    /// with CUPEL_ERROR_INVALID_ARGUMENT naming the item.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`pipeline`).
    unsafe fn cupel_pipeline_set_tokenizer(
        pipeline: *mut cupel_pipeline,
        tokenizer: *const cupel_tokenizer,
    ) -> cupel_status {
        // SAFETY: `pipeline`, `tokenizer` are NULL or valid as documented (the caller's promise).
        let pipeline = unsafe { arg_mut(pipeline, "pipeline") }?;
        let tokenizer = match tokenizer.is_null() {
            true => None,
            // SAFETY: as above; not NULL.
            false => Some(unsafe { arg_ref(tokenizer, "tokenizer") }?.inner.clone()),
        };
        pipeline.inner.tokenizer = tokenizer;
        Ok(())
    }
}

/// Included decision `i` of `report`, or an error naming `i`.
fn included(report: &cupel_report, i: usize) -> Result<&Decision> {
    let list = &report.report.included;
    list.get(i).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "i {i} is out of range: the report has {} included items",
            list.len()
        ))
    })
}

ffi_fn! {
    /// For included entry `i` (as `cupel_report_included`): the option
    /// chosen (0 for the item as pushed, also when it was truncated; v for
    /// its variant v) and the tokens it adds to the context (the variant's,
    /// the cut's, or the item's own). `cupel_report_selected_tokens` sums
    /// these; `cupel_decision.item_tokens` stays the item's own count.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (any argument),
    /// CUPEL_ERROR_INVALID_ARGUMENT (`i` out of range).
    unsafe fn cupel_report_included_variant(
        report: *const cupel_report,
        i: usize,
        out_variant: *mut usize,
        out_tokens: *mut i64,
    ) -> cupel_status {
        // SAFETY: every pointer is NULL or valid as documented (the caller's promise).
        let (report, variant, tokens) = unsafe {
            (
                arg_ref(report, "report")?,
                Out::new(out_variant, "out_variant")?,
                Out::new(out_tokens, "out_tokens")?,
            )
        };
        let d = included(report, i)?;
        variant.set(d.variant as usize);
        tokens.set(d.added_tokens);
        Ok(())
    }
}

ffi_fn! {
    /// For included entry `i`: the kept byte ranges of its content as
    /// `cupel_tokenizer_truncate` writes them (the host sends
    /// `content[0 .. head_end]` then `content[tail_start .. len]`):
    /// `head_end = tail_start =` the content's length when it was not cut,
    /// both 0 when it has no content. A variant is sent as the variant's
    /// own content (`cupel_items_variant`), never cut.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (any argument),
    /// CUPEL_ERROR_INVALID_ARGUMENT (`i` out of range).
    unsafe fn cupel_report_included_cut(
        report: *const cupel_report,
        i: usize,
        out_head_end: *mut usize,
        out_tail_start: *mut usize,
    ) -> cupel_status {
        // SAFETY: every pointer is NULL or valid as documented (the caller's promise).
        let (report, head, tail) = unsafe {
            (
                arg_ref(report, "report")?,
                Out::new(out_head_end, "out_head_end")?,
                Out::new(out_tail_start, "out_tail_start")?,
            )
        };
        let d = included(report, i)?;
        let (h, t) = d.cut.unwrap_or((d.content_len, d.content_len));
        head.set(h);
        tail.set(t);
        Ok(())
    }
}
