//! `cupel_scorer`: the Score stage's scorers.

use super::*;
use crate::scorer::{Curve, Decay, Scorer};

/// Opaque handle: a configured scorer. Create with a `cupel_scorer_new_*`
/// function, free exactly once with `cupel_scorer_free`. Composites and
/// scaled scorers keep their own copies of their children (free those
/// right after if you like), so a scorer graph can never hold a cycle.
pub struct cupel_scorer {
    pub(crate) inner: Scorer,
}

/// One KindScorer weight.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cupel_kind_weight {
    /// NUL-terminated UTF-8 kind (ASCII case-insensitive); not NULL.
    pub kind: *const c_char,
    /// Finite and >= 0 (may exceed 1).
    pub weight: f64,
}

/// One TagScorer weight.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cupel_tag_weight {
    /// NUL-terminated UTF-8 tag (compared case-sensitively); not NULL.
    pub tag: *const c_char,
    /// Finite and >= 0.
    pub weight: f64,
}

/// The curve of a DecayScorer.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cupel_decay_curve {
    /// `2^(-age / half_life)`: 1 at age 0, 0.5 at one half-life.
    CUPEL_DECAY_EXPONENTIAL = 0,
    /// The score of the first window whose max age is above the age (the
    /// last window's when the age reaches them all).
    CUPEL_DECAY_STEP = 1,
    /// 1 while the age is below max_age, 0 from it on.
    CUPEL_DECAY_WINDOW = 2,
}

/// One window of a step curve.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cupel_decay_window {
    /// Finite and > 0, in seconds.
    pub max_age_secs: f64,
    /// In [0, 1].
    pub score: f64,
}

pub use cupel_decay_curve::*;

fn hand_out_scorer(out: Out<*mut cupel_scorer>, inner: Scorer) {
    hand_out(out, cupel_scorer { inner });
}

/// Writes a scorer needing no configuration to `*out`.
///
/// # Safety
/// `out` is NULL or writable, as the exports' contract says.
unsafe fn simple(out: *mut *mut cupel_scorer, scorer: Scorer) -> Result<()> {
    // SAFETY: the caller's promise, passed on.
    let out = unsafe { Out::new(out, "out") }?;
    hand_out_scorer(out, scorer);
    Ok(())
}

ffi_fn! {
    /// Creates the scorer that gives each item the score pushed with it
    /// (the host's own relevance, e.g. embedding similarity), so it can be
    /// blended with others in a composite. Free with `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`).
    unsafe fn cupel_scorer_new_given(out: *mut *mut cupel_scorer) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        unsafe { simple(out, Scorer::Given) }
    }
}

ffi_fn! {
    /// Creates a RecencyScorer: an item's timestamp rank among the
    /// timestamped items, over their count minus one (1.0 for a lone one);
    /// 0.0 without a timestamp. Free with `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`).
    unsafe fn cupel_scorer_new_recency(out: *mut *mut cupel_scorer) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        unsafe { simple(out, Scorer::Recency) }
    }
}

ffi_fn! {
    /// Creates a PriorityScorer: as recency, over the priority (higher
    /// ranks higher); 0.0 without a priority. Free with `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`).
    unsafe fn cupel_scorer_new_priority(out: *mut *mut cupel_scorer) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        unsafe { simple(out, Scorer::Priority) }
    }
}

ffi_fn! {
    /// Creates a KindScorer: the weight of the item's kind (ASCII
    /// case-insensitive), 0.0 for a kind without one. `weights` NULL with
    /// `count` 0 gives the spec's defaults (SystemPrompt 1.0, Memory 0.8,
    /// ToolOutput 0.6, Document 0.4, Message 0.2); a non-NULL array with
    /// `count` 0 gives every item 0.0. Free with `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`, `weights` with count > 0, a
    /// kind), CUPEL_ERROR_INVALID_ARGUMENT (a weight negative or not
    /// finite, a bad kind, the same kind twice).
    unsafe fn cupel_scorer_new_kind(
        weights: *const cupel_kind_weight,
        count: usize,
        out: *mut *mut cupel_scorer,
    ) -> cupel_status {
        let custom = if weights.is_null() && count == 0 {
            None
        } else {
            // SAFETY: `weights` is NULL or valid as documented (the caller's promise).
            let weights = unsafe { arg_slice(weights, count, "weights") }?;
            let mut v = Vec::with_capacity(count);
            for (i, w) in weights.iter().enumerate() {
                // SAFETY: each kind is NULL or a valid string (the caller's promise).
                let kind = unsafe { arg_str(w.kind, &format!("weights[{i}].kind")) }?;
                v.push((kind.to_owned(), w.weight));
            }
            Some(v)
        };
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        hand_out_scorer(out, Scorer::kind(custom)?);
        Ok(())
    }
}

ffi_fn! {
    /// Creates a TagScorer: the summed weights of the item's tags (each
    /// occurrence, compared case-sensitively) over the sum of all weights,
    /// at most 1.0; 0.0 for an item without tags or when every weight is 0.
    /// `count` 0 (with `weights` NULL or not) configures no tag. Free with
    /// `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`, `weights` with count > 0, a
    /// tag), CUPEL_ERROR_INVALID_ARGUMENT (a weight negative or not finite,
    /// the same tag twice).
    unsafe fn cupel_scorer_new_tag(
        weights: *const cupel_tag_weight,
        count: usize,
        out: *mut *mut cupel_scorer,
    ) -> cupel_status {
        // SAFETY: `weights` is NULL or valid as documented (the caller's promise).
        let weights = unsafe { arg_slice(weights, count, "weights") }?;
        let mut v = Vec::with_capacity(count);
        for (i, w) in weights.iter().enumerate() {
            // SAFETY: each tag is NULL or a valid string (the caller's promise).
            let tag = unsafe { arg_str(w.tag, &format!("weights[{i}].tag")) }?;
            v.push((tag.to_owned(), w.weight));
        }
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        hand_out_scorer(out, Scorer::tag(v)?);
        Ok(())
    }
}

ffi_fn! {
    /// Creates a FrequencyScorer: the share of the other items that share
    /// at least one tag with the item (tags compared with ASCII case
    /// folding). Free with `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`).
    unsafe fn cupel_scorer_new_frequency(out: *mut *mut cupel_scorer) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        unsafe { simple(out, Scorer::Frequency) }
    }
}

ffi_fn! {
    /// Creates a ReflexiveScorer: the item's relevance hint clamped to
    /// [0, 1]; 0.0 without one or for a non-finite one. Free with
    /// `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`).
    unsafe fn cupel_scorer_new_reflexive(out: *mut *mut cupel_scorer) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        unsafe { simple(out, Scorer::Reflexive) }
    }
}

ffi_fn! {
    /// Creates a CompositeScorer: the weighted average of `children[i]`
    /// with `weights[i]` (relative: normalised to sum 1). The composite
    /// keeps copies of the children; the caller may free them right after.
    /// Free with `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`, `children`, `weights`, a
    /// child), CUPEL_ERROR_INVALID_ARGUMENT (`count` 0, a weight not finite
    /// or not > 0).
    unsafe fn cupel_scorer_new_composite(
        children: *const *const cupel_scorer,
        weights: *const f64,
        count: usize,
        out: *mut *mut cupel_scorer,
    ) -> cupel_status {
        // SAFETY: `children`, `weights` are NULL or valid as documented (the caller's promise).
        let (children, weights) = unsafe {
            (
                arg_slice(children, count, "children")?,
                arg_slice(weights, count, "weights")?,
            )
        };
        let mut v = Vec::with_capacity(count);
        for (i, (&c, &w)) in children.iter().zip(weights).enumerate() {
            // SAFETY: each child is NULL or a valid scorer (the caller's promise).
            let child = unsafe { arg_ref(c, &format!("children[{i}]")) }?;
            v.push((child.inner.clone(), w));
        }
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        hand_out_scorer(out, Scorer::composite(v)?);
        Ok(())
    }
}

ffi_fn! {
    /// Creates a ScaledScorer: `inner`'s scores min-max normalised over the
    /// list, `(s - min) / (max - min)`; 0.5 for every item when they are all
    /// equal. Keeps a copy of `inner`. Free with `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`inner`, `out`).
    unsafe fn cupel_scorer_new_scaled(
        inner: *const cupel_scorer,
        out: *mut *mut cupel_scorer,
    ) -> cupel_status {
        // SAFETY: `inner`, `out` are NULL or valid as documented (the caller's promise).
        let (inner, out) = unsafe { (arg_ref(inner, "inner")?, Out::new(out, "out")?) };
        hand_out_scorer(out, Scorer::Scaled(Box::new(inner.inner.clone())));
        Ok(())
    }
}

ffi_fn! {
    /// Creates a MetadataTrustScorer: metadata "cupel:trust" parsed as a
    /// decimal number and clamped to [0, 1]; `default_score` when the key is
    /// absent, the value does not parse, or it is not finite. Free with
    /// `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`), CUPEL_ERROR_INVALID_ARGUMENT
    /// (`default_score` outside [0, 1] or NaN).
    unsafe fn cupel_scorer_new_metadata_trust(
        default_score: f64,
        out: *mut *mut cupel_scorer,
    ) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        hand_out_scorer(out, Scorer::metadata_trust(default_score)?);
        Ok(())
    }
}

ffi_fn! {
    /// Creates a MetadataKeyScorer: `boost` for an item whose metadata `key`
    /// is exactly `value`, 1.0 (neutral) otherwise; meant as a multiplier
    /// inside a composite. Free with `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`key`, `value`, `out`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (`boost` not finite or not > 0, a string
    /// that is not UTF-8).
    unsafe fn cupel_scorer_new_metadata_key(
        key: *const c_char,
        value: *const c_char,
        boost: f64,
        out: *mut *mut cupel_scorer,
    ) -> cupel_status {
        // SAFETY: `key`, `value`, `out` are NULL or valid as documented (the caller's promise).
        let (key, value, out) = unsafe {
            (
                arg_str(key, "key")?,
                arg_str(value, "value")?,
                Out::new(out, "out")?,
            )
        };
        hand_out_scorer(out, Scorer::metadata_key(key, value, boost)?);
        Ok(())
    }
}

ffi_fn! {
    /// Creates a DecayScorer: a score from the age of each item's timestamp
    /// at `reference_unix_millis` (UTC milliseconds; there is no clock
    /// inside the library, so results are reproducible), through `curve`
    /// (a `cupel_decay_curve`, taken as `int` so that any number is safe):
    ///
    /// - CUPEL_DECAY_EXPONENTIAL: `2^(-age / duration_secs)`, the half-life;
    /// - CUPEL_DECAY_WINDOW: 1 while the age < `duration_secs`, then 0;
    /// - CUPEL_DECAY_STEP: `windows[0 .. window_count)`, youngest first
    ///   (`duration_secs` unused).
    ///
    /// A future-dated item has age 0. An item without a timestamp scores
    /// `null_timestamp_score` (the spec's default is 0.5). `windows` may be
    /// NULL (with `window_count` 0) for the other curves. Free with
    /// `cupel_scorer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`, `windows` with count > 0),
    /// CUPEL_ERROR_INVALID_ARGUMENT (an unknown curve; `duration_secs` not
    /// finite or not > 0 for exponential and window; no window, a window's
    /// max age not > 0 or its score outside [0, 1] for step;
    /// `null_timestamp_score` outside [0, 1]).
    unsafe fn cupel_scorer_new_decay(
        curve: std::ffi::c_int,
        duration_secs: f64,
        windows: *const cupel_decay_window,
        window_count: usize,
        reference_unix_millis: i64,
        null_timestamp_score: f64,
        out: *mut *mut cupel_scorer,
    ) -> cupel_status {
        // SAFETY: `windows` is NULL or valid as documented (the caller's promise).
        let windows = unsafe { arg_slice(windows, window_count, "windows") }?;
        let curve = match curve {
            0 => Curve::Exponential {
                half_life_secs: duration_secs,
            },
            1 => Curve::Step {
                windows: windows.iter().map(|w| (w.max_age_secs, w.score)).collect(),
            },
            2 => Curve::Window {
                max_age_secs: duration_secs,
            },
            v => {
                return Err(crate::Error::InvalidArgument(format!(
                    "curve is {v}; expected CUPEL_DECAY_EXPONENTIAL (0), CUPEL_DECAY_STEP (1) \
                     or CUPEL_DECAY_WINDOW (2)"
                )))
            }
        };
        let decay = Decay::new(curve, reference_unix_millis, null_timestamp_score)?;
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        hand_out_scorer(out, Scorer::Decay(decay));
        Ok(())
    }
}

ffi_fn! {
    /// Frees a scorer. NULL is a no-op. Free each handle exactly once;
    /// composites, scaled scorers and pipelines made from it keep their own
    /// copy.
    unsafe fn cupel_scorer_free(scorer: *mut cupel_scorer) {
        // SAFETY: NULL or a handle from its `_new` function, freed once (the caller's promise).
        unsafe { release(scorer) }
    }
}

ffi_fn! {
    /// The Score stage on its own: scores every item of `items` with the
    /// whole list as the scorer's peers (as a pipeline would score it if
    /// no item were pinned or had negative tokens), writing
    /// `out_scores[i]` for item i. Output buffer rules as in `cupel_slice`
    /// (`cupel_items_len(items)` entries suffice).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_BUFFER_TOO_SMALL.
    unsafe fn cupel_scorer_score(
        scorer: *const cupel_scorer,
        items: *const cupel_items,
        out_scores: *mut f64,
        capacity: usize,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: `scorer`, `items`, `out_scores`, `out_len` are NULL or valid as documented (the caller's promise).
        let (scorer, items, buf, out_len) = unsafe {
            (
                arg_ref(scorer, "scorer")?,
                arg_ref(items, "items")?,
                OutBuf::new(out_scores, capacity, "out_scores")?,
                Out::new(out_len, "out_len")?,
            )
        };
        buf.check_room(items.inner.len(), &out_len, "out_scores")?;
        let all: Vec<u32> = (0..items.inner.len() as u32).collect();
        let scores = scorer.inner.score_all(&items.inner, &all);
        buf.write_all(&scores, out_len, "out_scores", |s| s)
    }
}
