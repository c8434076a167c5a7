//! `cupel_items`: the scored candidates.

use super::*;
use crate::items::{Items, NewItem};

/// Opaque handle: a list of scored candidates. Create with
/// `cupel_items_new`, free exactly once with `cupel_items_free`.
pub struct cupel_items {
    pub(crate) inner: Items,
}

ffi_fn! {
    /// Creates an empty item list and writes it to `*out`.
    /// Free it exactly once with `cupel_items_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER if `out` is NULL.
    unsafe fn cupel_items_new(out: *mut *mut cupel_items) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        hand_out(
            out,
            cupel_items {
                inner: Items::new(),
            },
        );
        Ok(())
    }
}

ffi_fn! {
    /// Frees an item list. NULL is a no-op. Free each handle exactly once and do
    /// not use it afterwards.
    unsafe fn cupel_items_free(items: *mut cupel_items) {
        // SAFETY: NULL or a handle from its `_new` function, freed once (the caller's promise).
        unsafe { release(items) }
    }
}

ffi_fn! {
    /// Appends one item. Its index is its position in push order (from 0).
    ///
    /// `tokens` may be negative: such an item is never selected, and a
    /// report lists it as excluded with CUPEL_REASON_NEGATIVE_TOKENS (the
    /// Classify stage's rule). `score` must be finite (scorers produce
    /// [0, 1]; any finite value is accepted, -0.0 counts as 0.0). `kind` is a NUL-terminated UTF-8
    /// string compared with ASCII case folding, neither empty nor only
    /// whitespace; NULL means the default kind "Message".
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (bad score or kind, or the list already holds 2^32 - 1 items).
    /// On error the list is unchanged.
    unsafe fn cupel_items_push(
        items: *mut cupel_items,
        tokens: i64,
        score: f64,
        kind: *const c_char,
    ) -> cupel_status {
        // SAFETY: `items`, `kind` are NULL or valid as documented (the caller's promise).
        let (items, kind) = unsafe {
            (
                arg_mut(items, "items")?,
                arg_opt_str(kind, "kind")?,
            )
        };
        items.inner.push(NewItem {
            tokens,
            score,
            kind,
        })
    }
}

ffi_fn! {
    /// Appends `count` items from parallel arrays, all or nothing.
    ///
    /// `tokens[i]`, `scores[i]` and `kinds[i]` describe item i; `tokens` and
    /// `scores` may be NULL only when `count` is 0. `kinds` NULL gives every item
    /// the default kind "Message"; a NULL element gives that item the default kind.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (the message
    /// names the first bad index, e.g. "scores[17] is NaN"). On error no item is added.
    unsafe fn cupel_items_push_many(
        items: *mut cupel_items,
        count: usize,
        tokens: *const i64,
        scores: *const f64,
        kinds: *const *const c_char,
    ) -> cupel_status {
        // SAFETY: `items`, `tokens`, `scores` are NULL or valid as documented (the caller's promise).
        let (items, tokens, scores) = unsafe {
            (
                arg_mut(items, "items")?,
                arg_slice(tokens, count, "tokens")?,
                arg_slice(scores, count, "scores")?,
            )
        };
        let kinds = if kinds.is_null() {
            None
        } else {
            // SAFETY: `kinds` is NULL or valid as documented (the caller's promise).
            Some(unsafe { arg_slice(kinds, count, "kinds") }?)
        };
        // Hosts usually pass a few kinds many times: a string equal to one
        // of the last few seen (same pointer, or same bytes up to its NUL)
        // is already checked and needs no strlen or UTF-8 pass.
        let mut recent = RecentKinds::default();
        let item = |i: usize| {
            let kind = match kinds {
                Some(k) if !k[i].is_null() => {
                    // SAFETY: k[i] is not NULL and, as the caller
                    // promised, NUL-terminated.
                    let hit = unsafe { recent.find(k[i]) };
                    match hit {
                        Some(kind) => Some(kind),
                        None => {
                            // SAFETY: k[i] is a valid string (the caller's promise).
                            let check = |n: &str| unsafe { arg_str(k[i], n) };
                            let kind = named(check, || format!("kinds[{i}]"))?;
                            recent.add(k[i], kind);
                            Some(kind)
                        }
                    }
                }
                _ => None,
            };
            Ok(NewItem {
                tokens: tokens[i],
                score: scores[i],
                kind,
            })
        };
        items.inner.push_each(count, item)
    }
}

/// The last few distinct kind strings of a `push_many` call, checked.
struct RecentKinds<'a> {
    entries: [(*const c_char, &'a str); 8],
    len: usize,
    next: usize,
}

impl Default for RecentKinds<'_> {
    fn default() -> Self {
        RecentKinds {
            entries: [(std::ptr::null(), ""); 8],
            len: 0,
            next: 0,
        }
    }
}

impl<'a> RecentKinds<'a> {
    /// The checked string `p` spells, if it is one of the recent ones.
    ///
    /// # Safety
    /// `p` is a non-NULL NUL-terminated string.
    unsafe fn find(&self, p: *const c_char) -> Option<&'a str> {
        let recent = &self.entries[..self.len];
        // The same pointer as last time, else the same bytes as any.
        if self.len > 0 {
            let last = recent[(self.next + recent.len() - 1) % recent.len()];
            if last.0 == p {
                return Some(last.1);
            }
        }
        // SAFETY: `p` is NUL-terminated (this function's contract).
        recent
            .iter()
            .find(|e| unsafe { same_c_str(p, e.1) })
            .map(|e| e.1)
    }

    fn add(&mut self, p: *const c_char, s: &'a str) {
        self.entries[self.next] = (p, s);
        self.next = (self.next + 1) % self.entries.len();
        self.len = (self.len + 1).min(self.entries.len());
    }
}

/// Whether the NUL-terminated `p` spells `s`. Reads `p` only up to the first
/// difference or its NUL (a `str` from a C string has no NUL inside).
///
/// # Safety
/// `p` is a non-NULL, NUL-terminated string.
unsafe fn same_c_str(p: *const c_char, s: &str) -> bool {
    for (j, b) in s.bytes().enumerate() {
        // SAFETY: bytes 0..j of `p` matched `s`, which has no NUL, so `p`'s
        // NUL is at j or later: byte j is inside the string.
        if unsafe { *p.add(j) } as u8 != b {
            return false;
        }
    }
    // SAFETY: as above, with j = s.len().
    unsafe { *p.add(s.len()) == 0 }
}

ffi_fn! {
    /// Removes the items from index `len` on, with all their attributes (and
    /// the kinds only they used, so a kind's spelling is as if they had
    /// never been pushed): the list then holds `len` items. For a host that
    /// pushes items and then sets their attributes, and wants to undo the
    /// push when a later call fails.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (`len` greater than the number of items; nothing changes).
    unsafe fn cupel_items_truncate(items: *mut cupel_items, len: usize) -> cupel_status {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        let items = unsafe { arg_mut(items, "items") }?;
        items.inner.truncate(len)
    }
}

ffi_fn! {
    /// The number of items in the list; 0 for NULL.
    unsafe fn cupel_items_len(items: *const cupel_items) -> usize [0] {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        let items = unsafe { arg_opt_ref(items, "items") };
        items.ok().flatten().map_or(0, |items| items.inner.len())
    }
}

ffi_fn! {
    /// Removes every item (indices start again from 0). NULL is a no-op.
    unsafe fn cupel_items_clear(items: *mut cupel_items) {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        if let Ok(Some(items)) = unsafe { arg_opt_mut(items, "items") } {
            items.inner.clear()
        }
    }
}

ffi_fn! {
    /// Sets item `index`'s content (NUL-terminated UTF-8, not empty),
    /// replacing an earlier one. Deduplication compares contents byte for
    /// byte; an item whose content was never set is unique.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`, `content`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (`index` out of range, `content` empty or
    /// not UTF-8). On error the list is unchanged.
    unsafe fn cupel_items_set_content(
        items: *mut cupel_items,
        index: usize,
        content: *const c_char,
    ) -> cupel_status {
        // SAFETY: `items`, `content` are NULL or valid as documented (the caller's promise).
        let (items, content) = unsafe { (arg_mut(items, "items")?, arg_str(content, "content")?) };
        items.inner.set_content(index, content)
    }
}

ffi_fn! {
    /// Sets item `index`'s timestamp: UTC milliseconds since the Unix epoch
    /// (negative allowed).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range).
    unsafe fn cupel_items_set_timestamp(
        items: *mut cupel_items,
        index: usize,
        unix_millis: i64,
    ) -> cupel_status {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        let items = unsafe { arg_mut(items, "items") }?;
        items.inner.set_timestamp(index, unix_millis)
    }
}

ffi_fn! {
    /// Sets item `index`'s priority (higher is more important).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range).
    unsafe fn cupel_items_set_priority(
        items: *mut cupel_items,
        index: usize,
        priority: i64,
    ) -> cupel_status {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        let items = unsafe { arg_mut(items, "items") }?;
        items.inner.set_priority(index, priority)
    }
}

ffi_fn! {
    /// Pins item `index` (or unpins it): `cupel_pipeline_run` includes a
    /// pinned item without scoring or slicing it, and its tokens come off
    /// the budget first. (`cupel_slice` takes pinned tokens as an argument
    /// and ignores this flag.)
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range).
    unsafe fn cupel_items_set_pinned(
        items: *mut cupel_items,
        index: usize,
        pinned: bool,
    ) -> cupel_status {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        let items = unsafe { arg_mut(items, "items") }?;
        items.inner.set_pinned(index, pinned)
    }
}

ffi_fn! {
    /// Sets item `index`'s future-relevance hint, read by the Reflexive
    /// scorer (which clamps it to [0, 1] and gives 0 for a non-finite one).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range).
    unsafe fn cupel_items_set_relevance_hint(
        items: *mut cupel_items,
        index: usize,
        hint: f64,
    ) -> cupel_status {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        let items = unsafe { arg_mut(items, "items") }?;
        items.inner.set_relevance_hint(index, hint)
    }
}

ffi_fn! {
    /// Puts item `index` in keep-together group `group` (0: in none, the
    /// default). Items that share a non-zero id form one group: they are
    /// selected all together or not at all, and placed next to each other in
    /// push order (a tool call and its result are never split). Setting again
    /// replaces.
    ///
    /// Groups (docs/groups.md has the full rules and examples):
    /// - Everywhere: `cupel_slice` with every slicer and nesting,
    ///   `cupel_pipeline_run`, `cupel_marginal_items` and
    ///   `cupel_find_min_budget` select a group whole or not at all.
    /// - A slicer sees a group as one candidate: tokens = the members' summed
    ///   tokens, score = their summed score, kind = the kind of its first
    ///   member in push order; where an order breaks ties it stands at its
    ///   member that comes first in Sort order (score descending, then index).
    /// - GreedySlice: density = summed score / summed tokens; equal densities
    ///   in that order.
    /// - KnapsackSlice: one DP row, value = the sum of the members' integer
    ///   values (floor(score x 10000), at least 0, each), weight =
    ///   ceil(summed tokens / bucket_size): the optimum of the grouped problem.
    /// - QuotaSlice: a group's tokens count for its first member's kind.
    ///   CountQuotaSlice and CountConstrainedKnapsackSlice: a group counts as
    ///   one item of its first member's kind toward require_count and
    ///   cap_count.
    /// - A group whose members all have 0 tokens is a zero-token candidate
    ///   (always selected). A group with a negative-token member is never
    ///   selected: every member is excluded as CUPEL_REASON_NEGATIVE_TOKENS.
    /// - Pipeline: pinning one member pins the whole group (all members are
    ///   included as pinned and their tokens come off the budget first).
    ///   Deduplication leaves grouped items alone (they neither remove nor are
    ///   removed). Overflow truncation keeps or drops a group whole. The
    ///   placer orders a group by its first member in push order and the
    ///   other members follow it.
    /// - Report: every member of an excluded group gets the group's reason,
    ///   decided on the group's summed tokens; `cupel_decision.group` and
    ///   `.group_tokens` show the group (JSON: `"group"` in the item,
    ///   `"group_tokens"` in the reason).
    /// - A group whose summed tokens pass INT64_MAX is refused, not saturated:
    ///   the slice or run fails with CUPEL_ERROR_INVALID_ARGUMENT naming it.
    /// - StreamSlice has its own form: `cupel_stream_push_grouped`.
    /// - Cost: a list with no grouped item runs exactly as it would without
    ///   this call; grouping is one O(N) pass per call.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range).
    unsafe fn cupel_items_set_group(
        items: *mut cupel_items,
        index: usize,
        group: u64,
    ) -> cupel_status {
        // SAFETY: `items` is NULL or valid as documented (the caller's promise).
        let items = unsafe { arg_mut(items, "items") }?;
        items.inner.set_group(index, group)
    }
}

ffi_fn! {
    /// Sets item `index`'s source ("Chat" when never set; "Tool", "Rag" or
    /// any other visible name). Reported in the JSON report only.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range, `source` empty, only whitespace or not UTF-8).
    unsafe fn cupel_items_set_source(
        items: *mut cupel_items,
        index: usize,
        source: *const c_char,
    ) -> cupel_status {
        // SAFETY: `items`, `source` are NULL or valid as documented (the caller's promise).
        let (items, source) = unsafe { (arg_mut(items, "items")?, arg_str(source, "source")?) };
        items.inner.set_source(index, source)
    }
}

ffi_fn! {
    /// Adds a tag to item `index` (tags accumulate, repeats included). The
    /// Tag scorer compares tags exactly, the Frequency scorer with ASCII
    /// case folding.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range, `tag` not UTF-8).
    unsafe fn cupel_items_add_tag(
        items: *mut cupel_items,
        index: usize,
        tag: *const c_char,
    ) -> cupel_status {
        // SAFETY: `items`, `tag` are NULL or valid as documented (the caller's promise).
        let (items, tag) = unsafe { (arg_mut(items, "items")?, arg_str(tag, "tag")?) };
        items.inner.add_tag(index, tag)
    }
}

ffi_fn! {
    /// Sets metadata `key` of item `index` to `value` (UTF-8 strings;
    /// setting a key again replaces its value). The MetadataTrust scorer
    /// parses "cupel:trust" as a number; MetadataKey compares values exactly.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT
    /// (`index` out of range, a string not UTF-8).
    unsafe fn cupel_items_set_metadata(
        items: *mut cupel_items,
        index: usize,
        key: *const c_char,
        value: *const c_char,
    ) -> cupel_status {
        // SAFETY: `items`, `key`, `value` are NULL or valid as documented (the caller's promise).
        let (items, key, value) = unsafe {
            (
                arg_mut(items, "items")?,
                arg_str(key, "key")?,
                arg_str(value, "value")?,
            )
        };
        items.inner.set_metadata(index, key, value)
    }
}

/// The items `first .. first + count` of a list of `len`, or an error.
fn column_range(first: usize, count: usize, len: usize) -> Result<std::ops::Range<usize>> {
    match first.checked_add(count) {
        Some(end) if end <= len => Ok(first..end),
        _ => Err(crate::Error::InvalidArgument(format!(
            "first {first} + count {count} is past the end: the list holds {len} items"
        ))),
    }
}

/// Sets `values[k]` on item `first + k` with `set`, all or nothing.
///
/// # Safety
/// `values` is NULL or points to `count` values, as the exports say.
pub(super) unsafe fn set_column<T: Copy>(
    items: *mut cupel_items,
    first: usize,
    count: usize,
    values: *const T,
    name: &str,
    set: impl Fn(&mut Items, usize, T) -> Result<()>,
) -> Result<()> {
    // SAFETY: the caller's promise, passed on.
    let (items, values) = unsafe { (arg_mut(items, "items")?, arg_slice(values, count, name)?) };
    let range = column_range(first, count, items.inner.len())?;
    for (i, &v) in range.zip(values) {
        set(&mut items.inner, i, v)?;
    }
    Ok(())
}

ffi_fn! {
    /// Bulk form of `cupel_items_set_timestamp`: item `first + k` gets
    /// `unix_millis[k]` for k < `count`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (the
    /// range goes past the end; nothing is set).
    unsafe fn cupel_items_set_timestamps(
        items: *mut cupel_items,
        first: usize,
        count: usize,
        unix_millis: *const i64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { set_column(items, first, count, unix_millis, "unix_millis", Items::set_timestamp) }
    }
}

ffi_fn! {
    /// Bulk form of `cupel_items_set_priority`: item `first + k` gets
    /// `priorities[k]` for k < `count`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (the
    /// range goes past the end; nothing is set).
    unsafe fn cupel_items_set_priorities(
        items: *mut cupel_items,
        first: usize,
        count: usize,
        priorities: *const i64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { set_column(items, first, count, priorities, "priorities", Items::set_priority) }
    }
}

ffi_fn! {
    /// Bulk form of `cupel_items_set_pinned`: item `first + k` gets
    /// `pinned[k]` for k < `count`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (the
    /// range goes past the end; nothing is set).
    unsafe fn cupel_items_set_pinned_many(
        items: *mut cupel_items,
        first: usize,
        count: usize,
        pinned: *const bool,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { set_column(items, first, count, pinned, "pinned", Items::set_pinned) }
    }
}

ffi_fn! {
    /// Bulk form of `cupel_items_set_relevance_hint`: item `first + k` gets
    /// `hints[k]` for k < `count`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (the
    /// range goes past the end; nothing is set).
    unsafe fn cupel_items_set_relevance_hints(
        items: *mut cupel_items,
        first: usize,
        count: usize,
        hints: *const f64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { set_column(items, first, count, hints, "hints", Items::set_relevance_hint) }
    }
}

/// `count` NUL-terminated strings packed back to back in `bytes` (exactly:
/// nothing may follow the last NUL), each checked as UTF-8; `name` names
/// the array in messages (`name[k]`).
fn unpack<'a>(bytes: &'a [u8], count: usize, name: &str) -> Result<Vec<&'a str>> {
    let mut out = Vec::with_capacity(count);
    let mut rest = bytes;
    for k in 0..count {
        let Some(end) = rest.iter().position(|&b| b == 0) else {
            return Err(crate::Error::InvalidArgument(format!(
                "{name} holds {k} NUL-terminated strings in {} bytes; count is {count}",
                bytes.len()
            )));
        };
        let s = std::str::from_utf8(&rest[..end]).map_err(|_| {
            crate::Error::InvalidArgument(format!("{name}[{k}] is not valid UTF-8"))
        })?;
        out.push(s);
        rest = &rest[end + 1..];
    }
    if !rest.is_empty() {
        return Err(crate::Error::InvalidArgument(format!(
            "{name}: {} bytes follow the {count} strings count asks for; the length must end at \
             the last one's NUL",
            rest.len()
        )));
    }
    Ok(out)
}

ffi_fn! {
    /// `cupel_items_push_many` with the kinds packed: `kinds` holds `count`
    /// NUL-terminated UTF-8 strings back to back (`kinds_len` bytes in all,
    /// ending at the last NUL); an empty string means the default kind.
    /// `kinds` NULL (with `kinds_len` 0): every item of the default kind.
    /// For hosts that marshal one buffer more cheaply than an array of
    /// pointers (Python, JavaScript). All or nothing, as `cupel_items_push_many`.
    ///
    /// Errors: those of `cupel_items_push_many`, and
    /// CUPEL_ERROR_INVALID_ARGUMENT when `kinds` holds another number of
    /// strings than `count`.
    unsafe fn cupel_items_push_many_packed(
        items: *mut cupel_items,
        count: usize,
        tokens: *const i64,
        scores: *const f64,
        kinds: *const c_char,
        kinds_len: usize,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (items, tokens, scores) = unsafe {
            (
                arg_mut(items, "items")?,
                arg_slice(tokens, count, "tokens")?,
                arg_slice(scores, count, "scores")?,
            )
        };
        let kinds = if kinds.is_null() && kinds_len == 0 {
            None
        } else {
            // SAFETY: `kinds` is NULL or `kinds_len` readable bytes (the caller's promise).
            let bytes = unsafe { arg_slice(kinds.cast::<u8>(), kinds_len, "kinds") }?;
            Some(unpack(bytes, count, "kinds")?)
        };
        items.inner.push_each(count, |i| {
            Ok(NewItem {
                tokens: tokens[i],
                score: scores[i],
                kind: kinds.as_ref().map(|k| k[i]).filter(|k| !k.is_empty()),
            })
        })
    }
}

ffi_fn! {
    /// `cupel_items_set_contents` with the contents packed: `contents` holds
    /// `count` NUL-terminated UTF-8 strings back to back (`contents_len` bytes
    /// in all, ending at the last NUL); an empty string leaves that item's
    /// content as it is. All or nothing.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (the
    /// range goes past the end, another number of strings than `count`, a
    /// string that is not UTF-8).
    unsafe fn cupel_items_set_contents_packed(
        items: *mut cupel_items,
        first: usize,
        count: usize,
        contents: *const c_char,
        contents_len: usize,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (items, bytes) = unsafe {
            (
                arg_mut(items, "items")?,
                arg_slice(contents.cast::<u8>(), contents_len, "contents")?,
            )
        };
        let range = column_range(first, count, items.inner.len())?;
        let strings = unpack(bytes, count, "contents")?;
        for (i, s) in range.zip(strings) {
            if !s.is_empty() {
                items.inner.set_content(i, s)?;
            }
        }
        Ok(())
    }
}

ffi_fn! {
    /// Bulk form of `cupel_items_set_group`: item `first + k` gets
    /// `groups[k]` for k < `count` (0: no group).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (the
    /// range goes past the end; nothing is set).
    unsafe fn cupel_items_set_groups(
        items: *mut cupel_items,
        first: usize,
        count: usize,
        groups: *const u64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        unsafe { set_column(items, first, count, groups, "groups", Items::set_group) }
    }
}

ffi_fn! {
    /// Bulk form of `cupel_items_set_content`: item `first + k` gets
    /// `contents[k]` for k < `count`; a NULL element leaves that item's
    /// content as it is. All or nothing: every string is checked first.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`, `contents` with count > 0),
    /// CUPEL_ERROR_INVALID_ARGUMENT (the range goes past the end, a content
    /// empty or not UTF-8: the message names `contents[k]`).
    unsafe fn cupel_items_set_contents(
        items: *mut cupel_items,
        first: usize,
        count: usize,
        contents: *const *const c_char,
    ) -> cupel_status {
        // SAFETY: `items`, `contents` are NULL or valid as documented (the caller's promise).
        let (items, contents) = unsafe {
            (
                arg_mut(items, "items")?,
                arg_slice(contents, count, "contents")?,
            )
        };
        let range = column_range(first, count, items.inner.len())?;
        let mut checked = Vec::with_capacity(count);
        for (k, &p) in contents.iter().enumerate() {
            // SAFETY: each element is NULL or a valid string (the caller's promise).
            let s = unsafe { arg_opt_str(p, "") };
            let s = s.map_err(|_| {
                crate::Error::InvalidArgument(format!("contents[{k}] is not valid UTF-8"))
            })?;
            if s == Some("") {
                return Err(crate::Error::InvalidArgument(format!(
                    "contents[{k}] is empty; content must be non-empty"
                )));
            }
            checked.push(s);
        }
        for (i, s) in range.zip(checked) {
            if let Some(s) = s {
                items.inner.set_content(i, s)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    #[test]
    fn recent_kinds_keep_the_last_eight() {
        let names: Vec<String> = (0..10).map(|k| format!("kind{k}")).collect();
        let c: Vec<CString> = names
            .iter()
            .map(|n| CString::new(n.as_str()).unwrap())
            .collect();
        let mut recent = RecentKinds::default();
        fn find<'a>(r: &RecentKinds<'a>, p: &CString) -> Option<&'a str> {
            // SAFETY: `p` is a live CString: non-NULL and NUL-terminated.
            unsafe { r.find(p.as_ptr()) }
        }
        assert_eq!(find(&recent, &c[0]), None);
        for k in 0..8 {
            recent.add(c[k].as_ptr(), &names[k]);
            // The one just added, and every earlier one: all eight fit.
            for j in 0..=k {
                assert_eq!(find(&recent, &c[j]), Some(names[j].as_str()), "{k} {j}");
            }
        }
        // The same bytes at another address are found too.
        let copy = CString::new("kind3").unwrap();
        assert_eq!(find(&recent, &copy), Some("kind3"));
        // A ninth evicts the oldest, a tenth the next.
        recent.add(c[8].as_ptr(), &names[8]);
        recent.add(c[9].as_ptr(), &names[9]);
        assert_eq!(find(&recent, &c[0]), None);
        assert_eq!(find(&recent, &c[1]), None);
        for j in 2..10 {
            assert_eq!(find(&recent, &c[j]), Some(names[j].as_str()));
        }
    }
}
