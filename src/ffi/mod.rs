//! The C ABI. Every export is written with [`ffi_fn!`](macros), which
//! wraps its body in [`guard`] (or [`guard_value`]): panics are caught, core
//! errors become a `cupel_status` plus a thread-local message. Every pointer
//! goes through the checked `arg_*` / [`Out`] / [`OutBuf`] helpers below
//! before it is used. With the SIMD kernels, this module is the only place
//! with `unsafe`; each block says why it is sound.
#![allow(non_camel_case_types)]

#[macro_use]
mod macros;

mod budget;
mod items;
mod memory;
mod pipeline;
mod placer;
mod policy;
mod readback;
mod report;
mod scorer;
mod session;
mod shrink;
mod slice;
mod slicer;
mod stream;
mod tokenizer;

pub use budget::*;
pub use items::*;
pub use memory::*;
pub use pipeline::*;
pub use placer::*;
pub use policy::*;
pub use readback::*;
pub use report::*;
pub use scorer::*;
pub use session::*;
pub use shrink::*;
pub use slice::*;
pub use slicer::*;
pub use stream::*;
pub use tokenizer::*;

use crate::error::{Error, Result};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The ABI version of this contract; `cupel_abi_version()` returns it.
pub const CUPEL_ABI_VERSION: u32 = 2;

/// The default bucket size of KnapsackSlice in the spec (tokens per bucket).
pub const CUPEL_DEFAULT_BUCKET_SIZE: i64 = 100;

/// The default memory limit of a slicer, in bytes (1 GiB).
pub const CUPEL_DEFAULT_MEMORY_LIMIT: usize = 1073741824;

/// The default batch size of a stream (`batch_size` 0 selects it).
pub const CUPEL_DEFAULT_BATCH_SIZE: usize = 32;

// The header's constants are literals (cbindgen cannot evaluate paths); keep
// them equal to the core's.
const _: () = assert!(CUPEL_DEFAULT_BUCKET_SIZE == crate::slicer::DEFAULT_BUCKET_SIZE);
const _: () = assert!(CUPEL_DEFAULT_MEMORY_LIMIT == crate::slicer::DEFAULT_MEMORY_LIMIT);
const _: () = assert!(CUPEL_DEFAULT_BATCH_SIZE == crate::stream::DEFAULT_BATCH_SIZE);

const VERSION: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(v) => v,
        Err(_) => panic!("the crate version has no NUL"),
    };

/// Status of every fallible call. `CUPEL_OK` is 0; the numbers never change.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cupel_status {
    /// Success.
    CUPEL_OK = 0,
    /// A required pointer argument was NULL.
    CUPEL_ERROR_NULL_POINTER = 1,
    /// A value outside its domain.
    CUPEL_ERROR_INVALID_ARGUMENT = 2,
    /// The output buffer is too small; `*out_len` holds the length needed.
    CUPEL_ERROR_BUFFER_TOO_SMALL = 3,
    /// A require count could not be met and scarcity is `CUPEL_SCARCITY_ERROR`.
    CUPEL_ERROR_SCARCITY = 4,
    /// The operation is not defined for this slicer.
    CUPEL_ERROR_UNSUPPORTED = 5,
    /// The work would exceed the slicer's memory limit, or memory ran out.
    CUPEL_ERROR_CAPACITY = 6,
    /// A bug caught at the boundary (a Rust panic); please report it.
    CUPEL_ERROR_INTERNAL = 7,
    /// `cupel_pipeline_run`: the selection exceeds the target and the
    /// overflow strategy is CUPEL_OVERFLOW_THROW.
    CUPEL_ERROR_OVERFLOW = 8,
}

/// What a count-based slicer does when a kind has fewer items than it requires.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cupel_scarcity {
    /// Include what exists and record a shortfall in the report.
    CUPEL_SCARCITY_DEGRADE = 0,
    /// Fail the call with `CUPEL_ERROR_SCARCITY`.
    CUPEL_SCARCITY_ERROR = 1,
}

pub use cupel_scarcity::*;
pub use cupel_status::*;

fn status_of(e: &Error) -> cupel_status {
    match e {
        Error::NullPointer(_) => CUPEL_ERROR_NULL_POINTER,
        Error::InvalidArgument(_) => CUPEL_ERROR_INVALID_ARGUMENT,
        Error::BufferTooSmall { .. } => CUPEL_ERROR_BUFFER_TOO_SMALL,
        Error::Scarcity(_) => CUPEL_ERROR_SCARCITY,
        Error::Unsupported(_) => CUPEL_ERROR_UNSUPPORTED,
        Error::Capacity(_) => CUPEL_ERROR_CAPACITY,
        Error::Internal(_) => CUPEL_ERROR_INTERNAL,
        Error::Overflow(_) => CUPEL_ERROR_OVERFLOW,
    }
}

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

fn set_last_error(message: String) {
    let message = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = Some(message));
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    format!("internal error (a bug in libcupel, please report it): {what}")
}

/// Runs an export body: catches panics, maps errors to a status and records
/// the message for `cupel_last_error`.
pub(crate) fn guard(body: impl FnOnce() -> Result<()>) -> cupel_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => CUPEL_OK,
        Ok(Err(e)) => {
            let status = status_of(&e);
            set_last_error(e.to_string());
            status
        }
        Err(payload) => {
            set_last_error(panic_message(payload.as_ref()));
            CUPEL_ERROR_INTERNAL
        }
    }
}

/// Runs an infallible export body (getters, `_free`): a panic gives `fallback`.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(v) => v,
        Err(payload) => {
            set_last_error(panic_message(payload.as_ref()));
            fallback
        }
    }
}

fn check_ptr<T>(p: *const T, name: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::NullPointer(format!("{name} is NULL")));
    }
    if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(Error::InvalidArgument(format!(
            "{name} ({p:p}) is not aligned for its type"
        )));
    }
    Ok(())
}

/// A checked shared reference to a caller's object: NULL and misaligned
/// pointers are errors that name the argument.
///
/// # Safety
/// `p` is NULL or points to a live `T` that nothing changes for `'a`.
pub(crate) unsafe fn arg_ref<'a, T>(p: *const T, name: &str) -> Result<&'a T> {
    check_ptr(p, name)?;
    // SAFETY: non-NULL and aligned (checked); live and unchanged for 'a
    // (the caller's promise).
    Ok(unsafe { &*p })
}

/// A checked exclusive reference to a caller's object.
///
/// # Safety
/// `p` is NULL or points to a live `T` that nothing else uses for `'a`.
pub(crate) unsafe fn arg_mut<'a, T>(p: *mut T, name: &str) -> Result<&'a mut T> {
    check_ptr(p, name)?;
    // SAFETY: non-NULL and aligned (checked); live and used by nothing else
    // for 'a (the caller's promise).
    Ok(unsafe { &mut *p })
}

/// Like [`arg_ref`], but NULL gives `None` (getters that return 0 for NULL).
///
/// # Safety
/// As [`arg_ref`].
pub(crate) unsafe fn arg_opt_ref<'a, T>(p: *const T, name: &str) -> Result<Option<&'a T>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's promise, passed on.
    unsafe { arg_ref(p, name) }.map(Some)
}

/// Like [`arg_mut`], but NULL gives `None` (optional arguments).
///
/// # Safety
/// As [`arg_mut`].
pub(crate) unsafe fn arg_opt_mut<'a, T>(p: *mut T, name: &str) -> Result<Option<&'a mut T>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's promise, passed on.
    unsafe { arg_mut(p, name) }.map(Some)
}

fn check_len<T>(p: *const T, len: usize, name: &str) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    check_ptr(p, name)?;
    if len > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(Error::InvalidArgument(format!(
            "{name}: length {len} does not fit in memory"
        )));
    }
    Ok(())
}

/// A checked input array; NULL is allowed only when `len` is 0.
///
/// # Safety
/// When `len > 0`, `p` is NULL or points to `len` initialised `T`s that
/// nothing changes for `'a`.
pub(crate) unsafe fn arg_slice<'a, T>(p: *const T, len: usize, name: &str) -> Result<&'a [T]> {
    check_len(p, len, name)?;
    Ok(if len == 0 {
        &[]
    } else {
        // SAFETY: non-NULL, aligned, and len * size_of::<T>() <= isize::MAX
        // (checked); `len` initialised elements (the caller's promise).
        unsafe { std::slice::from_raw_parts(p, len) }
    })
}

/// A checked, NUL-terminated UTF-8 string.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that nothing changes
/// for `'a`.
pub(crate) unsafe fn arg_str<'a>(p: *const c_char, name: &str) -> Result<&'a str> {
    check_ptr(p, name)?;
    // SAFETY: non-NULL (checked); NUL-terminated and unchanged for 'a (the
    // caller's promise).
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map_err(|e| {
        Error::InvalidArgument(format!(
            "{name} is not valid UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })
}

/// Runs the argument check `check` with a placeholder name and, only if it
/// fails, again with the real `name`: per-element checks then format no
/// name on the success path.
pub(crate) fn named<T>(
    check: impl Fn(&str) -> Result<T>,
    name: impl FnOnce() -> String,
) -> Result<T> {
    check("").or_else(|_| check(&name()))
}

/// An optional string: NULL gives `None`.
///
/// # Safety
/// As [`arg_str`].
pub(crate) unsafe fn arg_opt_str<'a>(p: *const c_char, name: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: the caller's promise, passed on.
        unsafe { arg_str(p, name) }.map(Some)
    }
}

/// A checked out-parameter: written only through [`Out::set`], on success.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    /// # Safety
    /// `p` is NULL or points to memory writable for a `T` until [`Out::set`].
    pub(crate) unsafe fn new(p: *mut T, name: &str) -> Result<Self> {
        check_ptr(p, name)?;
        Ok(Out(p))
    }

    pub(crate) fn set(self, value: T) {
        self.set_now(value)
    }

    /// Writes without consuming `self` (for `*out_len` on BUFFER_TOO_SMALL).
    fn set_now(&self, value: T) {
        // SAFETY: checked non-null and aligned in `new`, whose caller
        // promised writable memory for a T.
        unsafe { self.0.write(value) }
    }
}

/// A checked output buffer of `capacity` elements (NULL only when 0).
pub(crate) struct OutBuf<T> {
    p: *mut T,
    capacity: usize,
}

impl<T: Copy> OutBuf<T> {
    /// # Safety
    /// When `capacity > 0`, `p` is NULL or points to memory writable for
    /// `capacity` `T`s until the buffer is written.
    pub(crate) unsafe fn new(p: *mut T, capacity: usize, name: &str) -> Result<Self> {
        check_len(p as *const T, capacity, name)?;
        Ok(OutBuf { p, capacity })
    }

    /// Fails with BUFFER_TOO_SMALL, writing only `needed` to `out_len`,
    /// when `needed` values would not fit: a call can check this before it
    /// changes anything.
    pub(crate) fn check_room(
        &self,
        needed: usize,
        out_len: &Out<usize>,
        what: &'static str,
    ) -> Result<()> {
        if needed > self.capacity {
            out_len.set_now(needed);
            return Err(Error::BufferTooSmall {
                what,
                capacity: self.capacity,
                needed,
            });
        }
        Ok(())
    }

    /// Writes `values` and their count to `out_len` if they fit; otherwise
    /// writes only the needed count and fails with BUFFER_TOO_SMALL.
    pub(crate) fn write_all<S: Copy>(
        self,
        values: &[S],
        out_len: Out<usize>,
        what: &'static str,
        conv: impl Fn(S) -> T,
    ) -> Result<()> {
        self.check_room(values.len(), &out_len, what)?;
        for (k, &v) in values.iter().enumerate() {
            // SAFETY: k < values.len() <= capacity, and `new`'s caller
            // promised `capacity` writable elements.
            unsafe { self.p.add(k).write(conv(v)) }
        }
        out_len.set(values.len());
        Ok(())
    }
}

/// Handles handed out and not yet released, of every kind.
static LIVE_HANDLES: AtomicUsize = AtomicUsize::new(0);

impl OutBuf<c_char> {
    /// Writes `text` (no NUL inside) and its length to `out_len` if it
    /// fits, with a NUL after it when there is room; otherwise writes only
    /// the length and fails with BUFFER_TOO_SMALL.
    pub(crate) fn write_text(
        self,
        text: &[u8],
        out_len: Out<usize>,
        what: &'static str,
    ) -> Result<()> {
        self.check_room(text.len(), &out_len, what)?;
        for (k, &b) in text.iter().chain(&[0u8]).enumerate().take(self.capacity) {
            // SAFETY: k < capacity, and `new`'s caller promised `capacity`
            // writable bytes.
            unsafe { self.p.add(k).write(b as c_char) }
        }
        out_len.set(text.len());
        Ok(())
    }
}

/// Moves a new object to the heap and hands it out through `out`.
pub(crate) fn hand_out<T>(out: Out<*mut T>, value: T) {
    LIVE_HANDLES.fetch_add(1, Ordering::Relaxed);
    out.set(Box::into_raw(Box::new(value)));
}

/// Frees an object created by [`hand_out`]; NULL is a no-op, and so is a
/// misaligned pointer (which no `_new` function hands out; the message says so).
///
/// # Safety
/// `p` is NULL or a handle [`hand_out`] gave for a `T`, not yet released.
pub(crate) unsafe fn release<T>(p: *mut T) {
    if p.is_null() {
        return;
    }
    match check_ptr(p, "handle") {
        Ok(()) => {
            // SAFETY: from Box::into_raw in `hand_out` and not freed yet
            // (the caller's promise).
            drop(unsafe { Box::from_raw(p) });
            LIVE_HANDLES.fetch_sub(1, Ordering::Relaxed);
        }
        Err(e) => set_last_error(format!("free: {e}; nothing was freed")),
    }
}

ffi_fn! {
    /// The message of this thread's last failed `cupel_` call, or NULL if none
    /// failed yet. The string belongs to the library and stays valid until the
    /// next `cupel_` call on the same thread; copy it to keep it.
    fn cupel_last_error() -> *const c_char [std::ptr::null()] {
        LAST_ERROR.with(|e| e.borrow().as_ref().map_or(std::ptr::null(), |s| s.as_ptr()))
    }
}

ffi_fn! {
    /// The fixed name of a status code, e.g. "CUPEL_ERROR_BUFFER_TOO_SMALL"
    /// (a static string; never NULL). An unknown number gives "CUPEL_UNKNOWN_STATUS".
    /// `status` is a `cupel_status` value (taken as `int` so that any number is safe).
    fn cupel_status_str(status: std::ffi::c_int) -> *const c_char [c"CUPEL_UNKNOWN_STATUS".as_ptr()] {
        let name: &'static CStr = match status {
            0 => c"CUPEL_OK",
            1 => c"CUPEL_ERROR_NULL_POINTER",
            2 => c"CUPEL_ERROR_INVALID_ARGUMENT",
            3 => c"CUPEL_ERROR_BUFFER_TOO_SMALL",
            4 => c"CUPEL_ERROR_SCARCITY",
            5 => c"CUPEL_ERROR_UNSUPPORTED",
            6 => c"CUPEL_ERROR_CAPACITY",
            7 => c"CUPEL_ERROR_INTERNAL",
            8 => c"CUPEL_ERROR_OVERFLOW",
            _ => c"CUPEL_UNKNOWN_STATUS",
        };
        name.as_ptr()
    }
}

// A test hook for the panic boundary, built only with the `test-hooks`
// feature (the crate's own tests turn it on; the header never shows it):
// panics inside the library on purpose, so the call returns
// CUPEL_ERROR_INTERNAL with the panic's message and nothing unwinds.
#[cfg(feature = "test-hooks")]
ffi_fn! {
    fn cupel_debug_panic() -> cupel_status {
        panic!("deliberate panic from cupel_debug_panic")
    }
}

ffi_fn! {
    /// The number of handles of every kind (items, budgets, slicers,
    /// scorers, placers, pipelines, reports, streams, tokenizers) created by
    /// a `_new` function and not yet freed, in
    /// the whole process. For leak checks in hosts and bindings: a test
    /// that drops its handles to a finalizer can see them freed.
    fn cupel_live_handles() -> usize [0] {
        LIVE_HANDLES.load(Ordering::Relaxed)
    }
}

ffi_fn! {
    /// The library version, "MAJOR.MINOR.PATCH" (a static string), equal to the
    /// `CUPEL_VERSION_*` macros of the header it was built with.
    fn cupel_version() -> *const c_char [VERSION.as_ptr()] {
        VERSION.as_ptr()
    }
}

ffi_fn! {
    /// The ABI version of the library, equal to `CUPEL_ABI_VERSION` (docs/abi.md:
    /// it changes exactly when the ABI changes incompatibly; 2 since 0.2.0).
    fn cupel_abi_version() -> u32 [CUPEL_ABI_VERSION] {
        CUPEL_ABI_VERSION
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_length_up_to_isize_max_bytes_is_accepted() {
        let p = std::ptr::NonNull::<i64>::dangling().as_ptr() as *const i64;
        let most = isize::MAX as usize / 8;
        assert!(check_len(p, most, "xs").is_ok());
        let e = check_len(p, most + 1, "xs").unwrap_err();
        assert!(e.to_string().contains("xs: length"), "{e}");
        assert!(check_len(std::ptr::null::<i64>(), 0, "xs").is_ok());
    }

    #[test]
    fn a_panic_becomes_internal_with_a_message() {
        let status = guard(|| panic!("deliberate"));
        assert_eq!(status, CUPEL_ERROR_INTERNAL);
        // SAFETY: a failed call just set the message: a valid C string.
        let msg = unsafe { CStr::from_ptr(cupel_last_error()) }
            .to_str()
            .unwrap();
        assert!(msg.contains("deliberate"), "{msg}");
        assert_eq!(guard_value(7, || -> i32 { panic!("again") }), 7);
    }

    #[test]
    fn errors_set_status_and_message() {
        let status = guard(|| Err(Error::Unsupported("nope".into())));
        assert_eq!(status, CUPEL_ERROR_UNSUPPORTED);
        // SAFETY: a failed call just set the message: a valid C string.
        let msg = unsafe { CStr::from_ptr(cupel_last_error()) }
            .to_str()
            .unwrap();
        assert_eq!(msg, "nope");
    }

    #[test]
    fn status_names() {
        for (code, name) in [
            (0, "CUPEL_OK"),
            (3, "CUPEL_ERROR_BUFFER_TOO_SMALL"),
            (7, "CUPEL_ERROR_INTERNAL"),
            (-1, "CUPEL_UNKNOWN_STATUS"),
        ] {
            // SAFETY: cupel_status_str returns a static C string.
            let s = unsafe { CStr::from_ptr(cupel_status_str(code)) };
            assert_eq!(s.to_str().unwrap(), name);
        }
    }
}
