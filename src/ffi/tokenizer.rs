//! `cupel_tokenizer`: exact token counting, token-exact truncation and
//! items pushed from text (`../shared/abi-text.md`).

use super::*;
use crate::items::NewItem;
use crate::text::tokenizer::{utf8, Keep, Tokenizer};

/// Opaque handle: a tokenizer (a vocabulary and its pre-tokenization
/// pattern). Create with `cupel_tokenizer_new` or
/// `cupel_tokenizer_from_tiktoken`, free exactly once with
/// `cupel_tokenizer_free`. Immutable once made: any number of threads may
/// count with one tokenizer at once.
pub struct cupel_tokenizer {
    pub(crate) inner: Tokenizer,
}

/// What `cupel_tokenizer_truncate` keeps of a text.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cupel_keep {
    /// The beginning of the text.
    CUPEL_KEEP_HEAD = 0,
    /// The end of the text.
    CUPEL_KEEP_TAIL = 1,
    /// The beginning and the end; the middle goes.
    CUPEL_KEEP_BOTH_ENDS = 2,
}

pub use cupel_keep::*;

/// The text `p[0 .. len)`: NULL with `len` 0 is the empty text; invalid
/// UTF-8 is an error naming `name` and the offset.
///
/// # Safety
/// `p` is NULL or points to `len` readable bytes that nothing changes for `'a`.
unsafe fn arg_text<'a>(p: *const c_char, len: usize, name: &str) -> Result<&'a str> {
    // SAFETY: the caller's promise, passed on.
    let bytes = unsafe { arg_slice(p as *const u8, len, name) }?;
    utf8(bytes, &name)
}

/// `keep` as a `Keep`, or an error naming its value.
pub(crate) fn keep_of(keep: std::ffi::c_int) -> Result<Keep> {
    match keep {
        0 => Ok(Keep::Head),
        1 => Ok(Keep::Tail),
        2 => Ok(Keep::BothEnds),
        v => Err(Error::InvalidArgument(format!(
            "keep is {v}; expected CUPEL_KEEP_HEAD (0), CUPEL_KEEP_TAIL (1) or \
             CUPEL_KEEP_BOTH_ENDS (2)"
        ))),
    }
}

/// A count as an `int64_t`.
fn count_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

ffi_fn! {
    /// Creates a tokenizer for a built-in encoding: `name` is "o200k_base"
    /// (GPT-4o, GPT-4.1, o-series, GPT-5) or "cl100k_base" (GPT-4, GPT-3.5,
    /// text-embedding-3). The vocabulary is indexed on first use (a few
    /// milliseconds) and shared by every tokenizer of the process after that.
    /// Free the tokenizer with `cupel_tokenizer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`name`, `out`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (an unknown name; the message lists the
    /// known ones), CUPEL_ERROR_UNSUPPORTED (the library was built without
    /// the cargo feature "builtin-vocabularies"; the message says how to
    /// build them in or load a file instead).
    unsafe fn cupel_tokenizer_new(name: *const c_char, out: *mut *mut cupel_tokenizer) -> cupel_status {
        // SAFETY: `name`, `out` are NULL or valid as documented (the caller's promise).
        let (name, out) = unsafe { (arg_str(name, "name")?, Out::new(out, "out")?) };
        hand_out(out, cupel_tokenizer { inner: Tokenizer::builtin(name)? });
        Ok(())
    }
}

ffi_fn! {
    /// Creates a tokenizer from any byte-level BPE vocabulary in tiktoken's
    /// file format: `ranks[0 .. ranks_len)` are the file's bytes (lines of
    /// `base64(token) rank`, as Llama 3 and the OpenAI encodings ship them),
    /// `pattern` the pre-tokenization regular expression as tiktoken writes
    /// it (NULL: o200k_base's). The o200k_base and cl100k_base patterns (and
    /// the classic cl100k pattern Llama 3 uses) run on hand-written
    /// splitters; any other pattern on a general engine, slower but exact.
    /// The library keeps its own copy of the vocabulary.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`ranks` with `ranks_len` > 0,
    /// `out`), CUPEL_ERROR_INVALID_ARGUMENT (a malformed line, a duplicate
    /// token or rank, a missing single-byte token: the message names the
    /// line; a pattern that does not compile or uses what the engine does not
    /// support: the message names the problem and its place).
    unsafe fn cupel_tokenizer_from_tiktoken(
        ranks: *const u8,
        ranks_len: usize,
        pattern: *const c_char,
        out: *mut *mut cupel_tokenizer,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (ranks, pattern, out) = unsafe {
            (arg_slice(ranks, ranks_len, "ranks")?, arg_opt_str(pattern, "pattern")?, Out::new(out, "out")?)
        };
        hand_out(out, cupel_tokenizer { inner: Tokenizer::from_tiktoken(ranks, pattern)? });
        Ok(())
    }
}

ffi_fn! {
    /// Frees a tokenizer. NULL is a no-op. Free each handle exactly once.
    unsafe fn cupel_tokenizer_free(tokenizer: *mut cupel_tokenizer) {
        // SAFETY: NULL or a handle from its `_new` function, freed once (the caller's promise).
        unsafe { release(tokenizer) }
    }
}

ffi_fn! {
    /// Counts the tokens of `text[0 .. len)` (UTF-8, not necessarily
    /// NUL-terminated; NULL with `len` 0 is the empty text): the length of
    /// tiktoken's `encode_ordinary` for this vocabulary, on every text.
    /// Special tokens such as `<|endoftext|>` count as ordinary text.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`tokenizer`, `out_tokens`, `text`
    /// with `len` > 0), CUPEL_ERROR_INVALID_ARGUMENT (invalid UTF-8: the
    /// message gives the offset of the first bad byte).
    unsafe fn cupel_tokenizer_count(
        tokenizer: *const cupel_tokenizer,
        text: *const c_char,
        len: usize,
        out_tokens: *mut i64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (tokenizer, text, out) = unsafe {
            (arg_ref(tokenizer, "tokenizer")?, arg_text(text, len, "text")?, Out::new(out_tokens, "out_tokens")?)
        };
        out.set(count_i64(tokenizer.inner.count(text)));
        Ok(())
    }
}

ffi_fn! {
    /// Counts `count` texts: text i is `texts[i][0 .. lens[i])` and its count
    /// goes to `out_tokens[i]`. All or nothing: every text is checked first,
    /// and on error nothing is written. Large batches are counted on two
    /// threads.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`tokenizer`; `texts`, `lens`,
    /// `out_tokens` when `count` > 0; `texts[i]` NULL with `lens[i]` > 0),
    /// CUPEL_ERROR_INVALID_ARGUMENT (a text that is not UTF-8: the message
    /// names `texts[i]` and the offset).
    unsafe fn cupel_tokenizer_count_many(
        tokenizer: *const cupel_tokenizer,
        count: usize,
        texts: *const *const c_char,
        lens: *const usize,
        out_tokens: *mut i64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (tokenizer, ptrs, lens, out) = unsafe {
            (
                arg_ref(tokenizer, "tokenizer")?,
                arg_slice(texts, count, "texts")?,
                arg_slice(lens, count, "lens")?,
                OutBuf::new(out_tokens, count, "out_tokens")?,
            )
        };
        let texts = texts_of(ptrs, lens)?;
        let counts = tokenizer.inner.count_many(&texts);
        let mut len = 0usize;
        // SAFETY: `len` is a local.
        let out_len = unsafe { Out::new(&mut len, "len") }?;
        out.write_all(&counts, out_len, "counts", count_i64)
    }
}

/// The texts of a `count_many`-shaped call, each checked.
fn texts_of<'a>(ptrs: &[*const c_char], lens: &[usize]) -> Result<Vec<&'a str>> {
    ptrs.iter()
        .zip(lens)
        .enumerate()
        .map(|(i, (&p, &n))| {
            // SAFETY: texts[i] is NULL or `lens[i]` readable bytes (the caller's promise).
            let check = |name: &str| unsafe { arg_text(p, n, name) };
            named(check, || format!("texts[{i}]"))
        })
        .collect()
}

ffi_fn! {
    /// Cuts `text[0 .. len)` to at most `max_tokens` tokens. The kept text is
    /// `text[0 .. *out_head_end)` followed by `text[*out_tail_start .. len)`;
    /// `*out_tokens` is the head's count plus the tail's, each counted on its
    /// own, and never exceeds `max_tokens`. Both offsets are UTF-8 character
    /// boundaries. With T the tokens of the whole text, a token boundary is
    /// an offset where a token of T starts or ends:
    ///
    /// - if the whole text counts at most `max_tokens`: both offsets are
    ///   `len` and `*out_tokens` is its count; `max_tokens` 0 keeps nothing
    ///   (`head_end` 0, `tail_start` `len`);
    /// - CUPEL_KEEP_HEAD: `tail_start` = `len`; `head_end` is the largest
    ///   token boundary that is a character boundary and whose prefix counts
    ///   at most `max_tokens`;
    /// - CUPEL_KEEP_TAIL: `head_end` = 0; `tail_start` is the smallest token
    ///   boundary that is a character boundary and whose suffix counts at most
    ///   `max_tokens`;
    /// - CUPEL_KEEP_BOTH_ENDS: the head by the HEAD rule with
    ///   ceil(`max_tokens` / 2) tokens, then the tail by the TAIL rule with
    ///   `max_tokens` minus the head's count, never starting before `head_end`.
    ///
    /// The library inserts no marker: a host that writes one between head and
    /// tail ("[... 4,213 tokens cut ...]") reserves its tokens first. Joining
    /// pieces may change a count by a token at each seam, since a token can
    /// span the join. The cost is about one count of the text.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`tokenizer`, the three out-pointers,
    /// `text` with `len` > 0), CUPEL_ERROR_INVALID_ARGUMENT (invalid UTF-8
    /// with its offset; `max_tokens` < 0; an unknown `keep`).
    unsafe fn cupel_tokenizer_truncate(
        tokenizer: *const cupel_tokenizer,
        text: *const c_char,
        len: usize,
        max_tokens: i64,
        keep: std::ffi::c_int,
        out_head_end: *mut usize,
        out_tail_start: *mut usize,
        out_tokens: *mut i64,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (tokenizer, text, head_end, tail_start, tokens) = unsafe {
            (
                arg_ref(tokenizer, "tokenizer")?,
                arg_text(text, len, "text")?,
                Out::new(out_head_end, "out_head_end")?,
                Out::new(out_tail_start, "out_tail_start")?,
                Out::new(out_tokens, "out_tokens")?,
            )
        };
        let keep = keep_of(keep)?;
        let max = usize::try_from(max_tokens).map_err(|_| {
            Error::InvalidArgument(format!("max_tokens is {max_tokens}; it must be >= 0"))
        })?;
        let cut = tokenizer.inner.truncate(text, max, keep);
        head_end.set(cut.head_end);
        tail_start.set(cut.tail_start);
        tokens.set(count_i64(cut.tokens));
        Ok(())
    }
}

ffi_fn! {
    /// Pushes one item made from a text: its tokens are the text's count with
    /// `tokenizer`, its content is the text (as `cupel_items_set_content`
    /// sets it), its score `score` and its kind `kind` (NULL: "Message"), as
    /// `cupel_items_push` takes them. The text is `text[0 .. len)`, UTF-8.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`, `tokenizer`, `text` with
    /// `len` > 0), CUPEL_ERROR_INVALID_ARGUMENT (invalid UTF-8 with its
    /// offset, an empty text (content must be non-empty), a bad score or
    /// kind). On error the list is unchanged.
    unsafe fn cupel_items_push_text(
        items: *mut cupel_items,
        tokenizer: *const cupel_tokenizer,
        text: *const c_char,
        len: usize,
        score: f64,
        kind: *const c_char,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (items, tokenizer, text, kind) = unsafe {
            (
                arg_mut(items, "items")?,
                arg_ref(tokenizer, "tokenizer")?,
                arg_text(text, len, "text")?,
                arg_opt_str(kind, "kind")?,
            )
        };
        push_texts(&mut items.inner, &tokenizer.inner, &[text], &[score], &[kind], false)
    }
}

ffi_fn! {
    /// Pushes `count` items made from texts, all or nothing: item i has text
    /// `texts[i][0 .. lens[i])`, score `scores[i]` and kind `kinds[i]`
    /// (`kinds` NULL, or a NULL element: "Message"), and its count with
    /// `tokenizer` as its tokens. The texts are counted on up to two threads.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`items`, `tokenizer`; `texts`,
    /// `lens`, `scores` when `count` > 0; `texts[i]` NULL with `lens[i]` > 0),
    /// CUPEL_ERROR_INVALID_ARGUMENT (the message names the first bad
    /// element: `texts[i]` not UTF-8 or empty, `scores[i]`, `kinds[i]`). On
    /// error no item is added.
    unsafe fn cupel_items_push_texts(
        items: *mut cupel_items,
        tokenizer: *const cupel_tokenizer,
        count: usize,
        texts: *const *const c_char,
        lens: *const usize,
        scores: *const f64,
        kinds: *const *const c_char,
    ) -> cupel_status {
        // SAFETY: the pointers are NULL or valid as documented (the caller's promise).
        let (items, tokenizer, ptrs, lens, scores) = unsafe {
            (
                arg_mut(items, "items")?,
                arg_ref(tokenizer, "tokenizer")?,
                arg_slice(texts, count, "texts")?,
                arg_slice(lens, count, "lens")?,
                arg_slice(scores, count, "scores")?,
            )
        };
        let kinds = if kinds.is_null() {
            None
        } else {
            // SAFETY: `kinds` is NULL or `count` pointers (the caller's promise).
            Some(unsafe { arg_slice(kinds, count, "kinds") }?)
        };
        // Element by element, so that the message names the first bad one.
        let mut texts = Vec::with_capacity(count);
        let mut kind_of = Vec::with_capacity(count);
        for i in 0..count {
            // SAFETY: texts[i] is NULL or `lens[i]` readable bytes (the caller's promise).
            let check = |name: &str| unsafe { arg_text(ptrs[i], lens[i], name) };
            let text = named(check, || format!("texts[{i}]"))?;
            let kind = match kinds {
                None => None,
                Some(k) => {
                    // SAFETY: kinds[i] is NULL or a string (the caller's promise).
                    let check = |name: &str| unsafe { arg_opt_str(k[i], name) };
                    named(check, || format!("kinds[{i}]"))?
                }
            };
            if text.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "texts[{i}] is empty; an item's content must be non-empty"
                )));
            }
            crate::items::Items::check(&NewItem { tokens: 0, score: scores[i], kind }, Some(i))?;
            texts.push(text);
            kind_of.push(kind);
        }
        push_texts(&mut items.inner, &tokenizer.inner, &texts, scores, &kind_of, true)
    }
}

/// Pushes items from texts, all or nothing: every text is checked and
/// counted first, the items pushed, then their contents set.
fn push_texts(
    items: &mut crate::items::Items,
    tokenizer: &Tokenizer,
    texts: &[&str],
    scores: &[f64],
    kinds: &[Option<&str>],
    many: bool,
) -> Result<()> {
    if let Some(i) = texts.iter().position(|t| t.is_empty()) {
        let name = if many {
            format!("texts[{i}]")
        } else {
            "text".into()
        };
        return Err(Error::InvalidArgument(format!(
            "{name} is empty; an item's content must be non-empty"
        )));
    }
    let counts = if many {
        tokenizer.count_many(texts)
    } else {
        texts.iter().map(|t| tokenizer.count(t)).collect()
    };
    let first = items.len();
    let item = |i: usize| {
        Ok(NewItem {
            tokens: count_i64(counts[i]),
            score: scores[i],
            kind: kinds[i],
        })
    };
    if many {
        items.push_each(texts.len(), item)?;
    } else {
        items.push(item(0)?)?;
    }
    for (k, t) in texts.iter().enumerate() {
        if let Err(e) = items.set_content(first + k, t) {
            items.truncate(first)?;
            return Err(e);
        }
    }
    Ok(())
}
