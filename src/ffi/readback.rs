//! Reading an item's attributes back (`cupel_items_tokens`, `_kind`,
//! `_content`, ...) and naming a reason (`cupel_reason_str`): what a
//! binding needs to show a host the items it pushed and the report's
//! reasons without keeping copies of its own.
//!
//! Strings are handed out as a pointer into the list and a length: they are
//! not NUL-terminated and stay valid until the list is next changed
//! (push, set, clear) or freed.

use super::*;
use crate::items::Items;
use crate::pipeline::report::Reason;

/// Writes `s` as a pointer and a length.
fn set_text(s: Option<&str>, out: Out<*const c_char>, out_len: Out<usize>) {
    match s {
        Some(s) => {
            out.set(s.as_ptr() as *const c_char);
            out_len.set(s.len());
        }
        None => {
            out.set(std::ptr::null());
            out_len.set(0);
        }
    }
}

/// Writes an optional value as a present flag and the value (0 when absent).
fn set_opt<T: Default>(v: Option<T>, out_present: Out<bool>, out: Out<T>) {
    out_present.set(v.is_some());
    out.set(v.unwrap_or_default());
}

/// The list behind `items` and the checked index `index` of it.
///
/// # Safety
/// `items` is NULL or a live `cupel_items` that nothing changes meanwhile.
unsafe fn item<'a>(items: *const cupel_items, index: usize) -> Result<(&'a Items, u32)> {
    // SAFETY: the caller's promise, passed on.
    let items = &unsafe { arg_ref(items, "items") }?.inner;
    Ok((items, items.at(index)?))
}

/// A getter of one value: `get` of item `index`, written to `out` (named
/// `name`) on success.
///
/// # Safety
/// As [`item`]; `out` is NULL or writable for a `T`.
pub(super) unsafe fn get_value<T>(
    items: *const cupel_items,
    index: usize,
    out: *mut T,
    name: &str,
    get: impl FnOnce(&Items, u32) -> T,
) -> Result<()> {
    // SAFETY: the caller's promise, passed on.
    let (out, (items, i)) = unsafe { (Out::new(out, name)?, item(items, index)?) };
    out.set(get(items, i));
    Ok(())
}

/// A getter of a string: a pointer (named `name`; NULL for none) and a length.
///
/// # Safety
/// As [`get_value`].
unsafe fn get_text(
    items: *const cupel_items,
    index: usize,
    out: *mut *const c_char,
    out_len: *mut usize,
    name: &str,
    get: impl for<'a> FnOnce(&'a Items, u32) -> Option<&'a str>,
) -> Result<()> {
    // SAFETY: the caller's promise, passed on.
    let (out, out_len, (items, i)) = unsafe {
        (
            Out::new(out, name)?,
            Out::new(out_len, "out_len")?,
            item(items, index)?,
        )
    };
    set_text(get(items, i), out, out_len);
    Ok(())
}

/// A getter of an optional value: a present flag and the value (named `name`).
///
/// # Safety
/// As [`get_value`].
unsafe fn get_opt<T: Default>(
    items: *const cupel_items,
    index: usize,
    out_present: *mut bool,
    out: *mut T,
    name: &str,
    get: impl FnOnce(&Items, u32) -> Option<T>,
) -> Result<()> {
    // SAFETY: the caller's promise, passed on.
    let (present, out, (items, i)) = unsafe {
        (
            Out::new(out_present, "out_present")?,
            Out::new(out, name)?,
            item(items, index)?,
        )
    };
    set_opt(get(items, i), present, out);
    Ok(())
}

ffi_fn! {
    /// Item `index`'s token count, as pushed.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`, `out_tokens`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (`index` out of range; the message names it).
    unsafe fn cupel_items_tokens(items: *const cupel_items, index: usize, out_tokens: *mut i64) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_value(items, index, out_tokens, "out_tokens", |it, i| it.view().tokens(i)) }
    }
}

ffi_fn! {
    /// Item `index`'s score, as pushed (the Score stage's scores are in a
    /// report's decisions, and `cupel_scorer_score`).
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_score(items: *const cupel_items, index: usize, out_score: *mut f64) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_value(items, index, out_score, "out_score", |it, i| it.view().score(i)) }
    }
}

ffi_fn! {
    /// Item `index`'s kind, as this list first spelled it (kinds compare
    /// with ASCII case folding, so "message" pushed after "Message" reads
    /// back as "Message"; the default kind is "Message").
    ///
    /// `*out_kind` points to `*out_len` bytes of UTF-8, not NUL-terminated,
    /// owned by the list and valid until it is next changed or freed.
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_kind(
        items: *const cupel_items,
        index: usize,
        out_kind: *mut *const c_char,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_text(items, index, out_kind, out_len, "out_kind", |it, i| Some(it.kind_name(i))) }
    }
}

ffi_fn! {
    /// Item `index`'s content: `*out_content` points to `*out_len` bytes of
    /// UTF-8 (not NUL-terminated; owned by the list and valid until it is
    /// next changed or freed), or is NULL with `*out_len` 0 when the item
    /// has no content.
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_content(
        items: *const cupel_items,
        index: usize,
        out_content: *mut *const c_char,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_text(items, index, out_content, out_len, "out_content", |it, i| it.content(i)) }
    }
}

ffi_fn! {
    /// Item `index`'s source: "Chat" unless set. Pointer and length as
    /// `cupel_items_content` (never NULL).
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_source(
        items: *const cupel_items,
        index: usize,
        out_source: *mut *const c_char,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_text(items, index, out_source, out_len, "out_source", |it, i| Some(it.source(i))) }
    }
}

ffi_fn! {
    /// Item `index`'s timestamp (UTC milliseconds): `*out_present` is false
    /// (and `*out_unix_millis` 0) when it has none.
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_timestamp(
        items: *const cupel_items,
        index: usize,
        out_present: *mut bool,
        out_unix_millis: *mut i64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_opt(items, index, out_present, out_unix_millis, "out_unix_millis", |it, i| it.timestamp(i)) }
    }
}

ffi_fn! {
    /// Item `index`'s priority: `*out_present` is false (and `*out_priority`
    /// 0) when it has none.
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_priority(
        items: *const cupel_items,
        index: usize,
        out_present: *mut bool,
        out_priority: *mut i64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_opt(items, index, out_present, out_priority, "out_priority", |it, i| it.priority(i)) }
    }
}

ffi_fn! {
    /// Item `index`'s relevance hint: `*out_present` is false (and
    /// `*out_hint` 0) when it has none.
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_relevance_hint(
        items: *const cupel_items,
        index: usize,
        out_present: *mut bool,
        out_hint: *mut f64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_opt(items, index, out_present, out_hint, "out_hint", |it, i| it.relevance_hint(i)) }
    }
}

ffi_fn! {
    /// Whether item `index` is pinned.
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_pinned(items: *const cupel_items, index: usize, out_pinned: *mut bool) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_value(items, index, out_pinned, "out_pinned", |it, i| it.pinned(i)) }
    }
}

ffi_fn! {
    /// Item `index`'s keep-together group (0: none).
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_group(items: *const cupel_items, index: usize, out_group: *mut u64) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_value(items, index, out_group, "out_group", |it, i| it.group(i)) }
    }
}

ffi_fn! {
    /// The number of tags of item `index` (duplicates counted, in the order added).
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_tag_count(items: *const cupel_items, index: usize, out_count: *mut usize) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_value(items, index, out_count, "out_count", |it, i| it.tags(i).len()) }
    }
}

ffi_fn! {
    /// Tag `tag_index` (< `cupel_items_tag_count`) of item `index`. Pointer
    /// and length as `cupel_items_content` (never NULL).
    ///
    /// Errors: as `cupel_items_tokens`; CUPEL_ERROR_INVALID_ARGUMENT for
    /// `tag_index` out of range.
    unsafe fn cupel_items_tag(
        items: *const cupel_items,
        index: usize,
        tag_index: usize,
        out_tag: *mut *const c_char,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (items, out, out_len) = unsafe {
            (arg_ref(items, "items")?, Out::new(out_tag, "out_tag")?, Out::new(out_len, "out_len")?)
        };
        let i = items.inner.at(index)?;
        let tags = items.inner.tags(i);
        let tag = tags.get(tag_index).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "tag_index {tag_index} is out of range: item {index} has {} tags",
                tags.len()
            ))
        })?;
        set_text(Some(tag), out, out_len);
        Ok(())
    }
}

ffi_fn! {
    /// The number of metadata entries of item `index` (one per key, in the
    /// order the keys were first set).
    ///
    /// Errors: as `cupel_items_tokens`.
    unsafe fn cupel_items_metadata_count(items: *const cupel_items, index: usize, out_count: *mut usize) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { get_value(items, index, out_count, "out_count", |it, i| it.metadata(i).len()) }
    }
}

ffi_fn! {
    /// Metadata entry `entry_index` (< `cupel_items_metadata_count`) of item
    /// `index`: its key and value, each a pointer and a length as
    /// `cupel_items_content` (never NULL).
    ///
    /// Errors: as `cupel_items_tokens`; CUPEL_ERROR_INVALID_ARGUMENT for
    /// `entry_index` out of range.
    unsafe fn cupel_items_metadata_entry(
        items: *const cupel_items,
        index: usize,
        entry_index: usize,
        out_key: *mut *const c_char,
        out_key_len: *mut usize,
        out_value: *mut *const c_char,
        out_value_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (items, key, key_len, value, value_len) = unsafe {
            (
                arg_ref(items, "items")?,
                Out::new(out_key, "out_key")?,
                Out::new(out_key_len, "out_key_len")?,
                Out::new(out_value, "out_value")?,
                Out::new(out_value_len, "out_value_len")?,
            )
        };
        let i = items.inner.at(index)?;
        let entries = items.inner.metadata(i);
        let (k, v) = entries.get(entry_index).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "entry_index {entry_index} is out of range: item {index} has {} metadata entries",
                entries.len()
            ))
        })?;
        set_text(Some(k), key, key_len);
        set_text(Some(v), value, value_len);
        Ok(())
    }
}

/// The specification's name of a reason, as a static C string.
fn reason_c_name(reason: Reason) -> &'static CStr {
    match reason {
        Reason::Scored => c"Scored",
        Reason::Pinned => c"Pinned",
        Reason::ZeroToken => c"ZeroToken",
        Reason::BudgetExceeded => c"BudgetExceeded",
        Reason::ScoredTooLow => c"ScoredTooLow",
        Reason::Deduplicated => c"Deduplicated",
        Reason::QuotaCapExceeded => c"QuotaCapExceeded",
        Reason::QuotaRequireDisplaced => c"QuotaRequireDisplaced",
        Reason::NegativeTokens => c"NegativeTokens",
        Reason::Variant => c"Variant",
        Reason::Truncated => c"Truncated",
        Reason::PinnedOverride => c"PinnedOverride",
        Reason::Filtered => c"Filtered",
        Reason::CountCapExceeded => c"CountCapExceeded",
        Reason::Deferred => c"Deferred",
    }
}

ffi_fn! {
    /// The specification's name of a reason (`cupel_decision.reason`, a
    /// `cupel_reason` value), as the JSON report writes it: "Scored",
    /// "BudgetExceeded", "Deduplicated", ... A static string, never NULL; a
    /// number that is no reason gives "Unknown". `reason` is taken as `int`
    /// so that any number is safe.
    fn cupel_reason_str(reason: std::ffi::c_int) -> *const c_char [c"Unknown".as_ptr()] {
        Reason::ALL
            .iter()
            .find(|r| **r as std::ffi::c_int == reason)
            .map_or(c"Unknown", |r| reason_c_name(*r))
            .as_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_has_its_json_name() {
        for r in Reason::ALL {
            // SAFETY: cupel_reason_str returns a static C string.
            let s = unsafe { CStr::from_ptr(cupel_reason_str(r as i32)) };
            assert_eq!(s.to_str().unwrap(), r.name());
        }
        for bad in [-1, 5, 9, 20, i32::MAX, i32::MIN] {
            // SAFETY: as above.
            let s = unsafe { CStr::from_ptr(cupel_reason_str(bad)) };
            assert_eq!(s.to_str().unwrap(), "Unknown");
        }
    }
}
