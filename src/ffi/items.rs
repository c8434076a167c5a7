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
    /// `tokens` must be >= 0, `score` finite (scorers produce [0, 1]; any finite
    /// value is accepted, -0.0 counts as 0.0). `kind` is a NUL-terminated UTF-8
    /// string compared with ASCII case folding, neither empty nor only
    /// whitespace; NULL means the default kind "Message".
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (bad tokens, score or kind, or the list already holds 2^32 - 1 items).
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
