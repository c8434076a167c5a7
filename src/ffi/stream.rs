//! `cupel_stream`: StreamSlice.

use super::*;
use crate::stream::Stream;

/// Opaque handle: a StreamSlice. Create with `cupel_stream_new`, free
/// exactly once with `cupel_stream_free`.
pub struct cupel_stream {
    pub(crate) inner: Stream,
}

ffi_fn! {
    /// Creates a stream that takes items up to `target_tokens`, deciding them
    /// `batch_size` at a time (0 means the default, 32): each full batch is
    /// ordered by score and its items taken while they fit (zero-token items
    /// always). A target <= 0 takes nothing. Free with `cupel_stream_free`.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`out`).
    unsafe fn cupel_stream_new(
        target_tokens: i64,
        batch_size: usize,
        out: *mut *mut cupel_stream,
    ) -> cupel_status {
        // SAFETY: `out` is NULL or valid as documented (the caller's promise).
        let out = unsafe { Out::new(out, "out") }?;
        hand_out(
            out,
            cupel_stream {
                inner: Stream::new(target_tokens, batch_size),
            },
        );
        Ok(())
    }
}

ffi_fn! {
    /// Frees a stream. NULL is a no-op. Free each handle exactly once.
    unsafe fn cupel_stream_free(stream: *mut cupel_stream) {
        // SAFETY: NULL or a handle from its `_new` function, freed once (the caller's promise).
        unsafe { release(stream) }
    }
}

ffi_fn! {
    /// Offers the next item (its index is the push order, from 0). Sets
    /// `*out_full` to true once the budget is spent: the producer should stop.
    /// An item pushed to a full stream keeps its index but is never taken.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER (`stream`, `out_full`),
    /// CUPEL_ERROR_INVALID_ARGUMENT (tokens < 0, non-finite score, or the stream
    /// is finished). On error the stream is unchanged.
    unsafe fn cupel_stream_push(
        stream: *mut cupel_stream,
        tokens: i64,
        score: f64,
        out_full: *mut bool,
    ) -> cupel_status {
        // SAFETY: `stream`, `out_full` are NULL or valid as documented (the caller's promise).
        let (stream, out_full) = unsafe {
            (
                arg_mut(stream, "stream")?,
                Out::new(out_full, "out_full")?,
            )
        };
        out_full.set(stream.inner.push(tokens, score)?);
        Ok(())
    }
}

ffi_fn! {
    /// `cupel_stream_push` for a member of keep-together group `group` (0: none,
    /// the same as `cupel_stream_push`). A group's members are pushed one after
    /// another; the group ends at the next push with another group or none. The
    /// stream decides a group as one candidate of its batch (summed tokens and
    /// score), taking all its items or none; a batch closes only between
    /// candidates (the batch size counts a group once), so a group is never
    /// split across batches. A group that began on a full stream is not taken.
    ///
    /// Errors: those of `cupel_stream_push`, and CUPEL_ERROR_INVALID_ARGUMENT
    /// when `group` already ended (its members were not pushed one after
    /// another) or the group's tokens would sum past INT64_MAX. On error the
    /// stream is unchanged.
    unsafe fn cupel_stream_push_grouped(
        stream: *mut cupel_stream,
        tokens: i64,
        score: f64,
        group: u64,
        out_full: *mut bool,
    ) -> cupel_status {
        // SAFETY: `stream`, `out_full` are NULL or valid as documented (the caller's promise).
        let (stream, out_full) = unsafe {
            (
                arg_mut(stream, "stream")?,
                Out::new(out_full, "out_full")?,
            )
        };
        out_full.set(stream.inner.push_grouped(tokens, score, group)?);
        Ok(())
    }
}

ffi_fn! {
    /// Ends the stream: decides the partial last batch (if budget remains) and
    /// writes the taken item indices, in the order they were taken. Output buffer
    /// rules as in `cupel_slice`; on CUPEL_ERROR_BUFFER_TOO_SMALL call again with
    /// a larger buffer (the result stays the same). After the first call the
    /// stream accepts no more pushes.
    ///
    /// Errors: CUPEL_ERROR_NULL_POINTER, CUPEL_ERROR_BUFFER_TOO_SMALL.
    unsafe fn cupel_stream_finish(
        stream: *mut cupel_stream,
        out_indices: *mut usize,
        capacity: usize,
        out_len: *mut usize,
    ) -> cupel_status {
        // SAFETY: `stream`, `out_indices`, `out_len` are NULL or valid as documented (the caller's promise).
        let (stream, buf, out_len) = unsafe {
            (
                arg_mut(stream, "stream")?,
                OutBuf::new(out_indices, capacity, "out_indices")?,
                Out::new(out_len, "out_len")?,
            )
        };
        // Check the buffer first: a failed call leaves the stream as it was.
        buf.check_room(stream.inner.finish_len(), &out_len, "out_indices")?;
        let taken = stream.inner.finish();
        buf.write_all(taken, out_len, "out_indices", |i| i as usize)
    }
}
