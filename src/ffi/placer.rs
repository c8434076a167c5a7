//! `cupel_placer`: the Place stage's final ordering.

use super::*;
use crate::placer::Placer;

/// Opaque handle: a placer. Create with a `cupel_placer_new_*` function,
/// free exactly once with `cupel_placer_free`.
pub struct cupel_placer {
    pub(crate) inner: Placer,
}

/// Writes a placer to `*out`.
///
/// # Safety
/// `out` is NULL or writable, as the exports' contract says.
unsafe fn new_placer(out: *mut *mut cupel_placer, inner: Placer) -> Result<()> {
    // SAFETY: the caller's promise, passed on.
    let out = unsafe { Out::new(out, "out") }?;
    hand_out(out, cupel_placer { inner });
    Ok(())
}

ffi_fn! {
    /// Creates a ChronologicalPlacer: items with a timestamp first, oldest
    /// first, then those without one; ties keep their order. Free with
    /// `cupel_placer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`).
    unsafe fn cupel_placer_new_chronological(out: *mut *mut cupel_placer) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        unsafe { new_placer(out, Placer::Chronological) }
    }
}

ffi_fn! {
    /// Creates a UShapedPlacer: the highest scores at both edges (ranks 0,
    /// 2, 4, ... from the start, 1, 3, 5, ... from the end), the lowest in
    /// the middle; equal scores keep their order. Free with
    /// `cupel_placer_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`).
    unsafe fn cupel_placer_new_u_shaped(out: *mut *mut cupel_placer) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        unsafe { new_placer(out, Placer::UShaped) }
    }
}

ffi_fn! {
    /// Frees a placer. NULL is a no-op. Free each handle exactly once.
    unsafe fn cupel_placer_free(placer: *mut cupel_placer) {
        // SAFETY: NULL or a handle from its `_new` function, freed once (the caller's promise).
        unsafe { release(placer) }
    }
}

ffi_fn! {
    /// The Place stage's ordering on its own: orders items `indices[0 ..
    /// count)` with scores `scores[0 .. count)` and writes their item
    /// indices in placed order. Output buffer rules as in `cupel_slice`
    /// (`count` entries suffice).
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_INVALID_ARGUMENT (an
    /// index out of range, a score that is NaN), CUPEL_ERROR_BUFFER_TOO_SMALL.
    unsafe fn cupel_placer_place(
        placer: *const cupel_placer,
        items: *const cupel_items,
        indices: *const usize,
        scores: *const f64,
        count: usize,
        out_indices: *mut usize,
        capacity: usize,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: each pointer is NULL or valid as documented (the caller's promise).
        let (placer, items, indices, scores, buf, out_len) = unsafe {
            (
                arg_ref(placer, "placer")?,
                arg_ref(items, "items")?,
                arg_slice(indices, count, "indices")?,
                arg_slice(scores, count, "scores")?,
                OutBuf::new(out_indices, capacity, "out_indices")?,
                Out::new(out_len, "out_len")?,
            )
        };
        let n = items.inner.len();
        let mut merged = Vec::with_capacity(count);
        for (k, (&i, &s)) in indices.iter().zip(scores).enumerate() {
            if i >= n {
                return Err(crate::Error::InvalidArgument(format!(
                    "indices[{k}] is {i}: out of range, the list holds {n} items"
                )));
            }
            if s.is_nan() {
                return Err(crate::Error::InvalidArgument(format!("scores[{k}] is NaN")));
            }
            merged.push((i as u32, s));
        }
        buf.check_room(count, &out_len, "out_indices")?;
        let placed = placer.inner.place(&items.inner, &merged);
        buf.write_all(&placed, out_len, "out_indices", |i| i as usize)
    }
}
