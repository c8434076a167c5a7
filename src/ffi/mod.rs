//! The C ABI. Every export goes through [`guard`] (or [`guard_value`]),
//! which catches panics and turns core errors into a `cupel_status` plus a
//! thread-local message; every pointer goes through the checked helpers
//! below before it is used. This module is the only place with `unsafe`.
#![allow(non_camel_case_types, clippy::missing_safety_doc)]

mod budget;
mod items;
mod report;
mod slice;
mod slicer;
mod stream;

pub use budget::*;
pub use items::*;
pub use report::*;
pub use slice::*;
pub use slicer::*;
pub use stream::*;

use crate::error::{Error, Result};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The ABI version of this contract; `cupel_abi_version()` returns it.
pub const CUPEL_ABI_VERSION: u32 = 1;

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

/// A checked shared reference to a caller's object.
pub(crate) unsafe fn arg_ref<'a, T>(p: *const T, name: &str) -> Result<&'a T> {
    check_ptr(p, name)?;
    Ok(&*p)
}

/// A checked exclusive reference to a caller's object.
pub(crate) unsafe fn arg_mut<'a, T>(p: *mut T, name: &str) -> Result<&'a mut T> {
    check_ptr(p, name)?;
    Ok(&mut *p)
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
pub(crate) unsafe fn arg_slice<'a, T>(p: *const T, len: usize, name: &str) -> Result<&'a [T]> {
    check_len(p, len, name)?;
    Ok(if len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, len)
    })
}

/// A checked, NUL-terminated UTF-8 string.
pub(crate) unsafe fn arg_str<'a>(p: *const c_char, name: &str) -> Result<&'a str> {
    check_ptr(p, name)?;
    CStr::from_ptr(p).to_str().map_err(|e| {
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
pub(crate) unsafe fn arg_opt_str<'a>(p: *const c_char, name: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        arg_str(p, name).map(Some)
    }
}

/// A checked out-parameter: written only through [`Out::set`], on success.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    pub(crate) unsafe fn new(p: *mut T, name: &str) -> Result<Self> {
        check_ptr(p, name)?;
        Ok(Out(p))
    }

    pub(crate) fn set(self, value: T) {
        // SAFETY: checked non-null and aligned in `new`; the caller promised
        // it points to writable memory for a T.
        unsafe { self.0.write(value) }
    }
}

/// A checked output buffer of `capacity` elements (NULL only when 0).
pub(crate) struct OutBuf<T> {
    p: *mut T,
    capacity: usize,
}

impl<T: Copy> OutBuf<T> {
    pub(crate) unsafe fn new(p: *mut T, capacity: usize, name: &str) -> Result<Self> {
        check_len(p as *const T, capacity, name)?;
        Ok(OutBuf { p, capacity })
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
        if values.len() > self.capacity {
            out_len.set(values.len());
            return Err(Error::BufferTooSmall {
                what,
                capacity: self.capacity,
                needed: values.len(),
            });
        }
        for (k, &v) in values.iter().enumerate() {
            // SAFETY: k < len <= capacity, checked in `new`.
            unsafe { self.p.add(k).write(conv(v)) }
        }
        out_len.set(values.len());
        Ok(())
    }
}

/// Moves a new object to the heap and hands it out through `out`.
pub(crate) fn hand_out<T>(out: Out<*mut T>, value: T) {
    out.set(Box::into_raw(Box::new(value)));
}

/// Frees an object created by [`hand_out`]; NULL is a no-op, and so is a
/// misaligned pointer (which no `_new` function hands out; the message says so).
pub(crate) unsafe fn release<T>(p: *mut T) {
    guard_value((), || {
        if p.is_null() {
            return;
        }
        match check_ptr(p, "handle") {
            Ok(()) => drop(Box::from_raw(p)),
            Err(e) => set_last_error(format!("free: {e}; nothing was freed")),
        }
    })
}

/// The message of this thread's last failed `cupel_` call, or NULL if none
/// failed yet. The string belongs to the library and stays valid until the
/// next `cupel_` call on the same thread; copy it to keep it.
#[no_mangle]
pub extern "C" fn cupel_last_error() -> *const c_char {
    guard_value(std::ptr::null(), || {
        LAST_ERROR.with(|e| e.borrow().as_ref().map_or(std::ptr::null(), |s| s.as_ptr()))
    })
}

/// The fixed name of a status code, e.g. "CUPEL_ERROR_BUFFER_TOO_SMALL"
/// (a static string; never NULL). An unknown number gives "CUPEL_UNKNOWN_STATUS".
/// `status` is a `cupel_status` value (taken as `int` so that any number is safe).
#[no_mangle]
pub extern "C" fn cupel_status_str(status: std::ffi::c_int) -> *const c_char {
    let name: &'static CStr = match status {
        0 => c"CUPEL_OK",
        1 => c"CUPEL_ERROR_NULL_POINTER",
        2 => c"CUPEL_ERROR_INVALID_ARGUMENT",
        3 => c"CUPEL_ERROR_BUFFER_TOO_SMALL",
        4 => c"CUPEL_ERROR_SCARCITY",
        5 => c"CUPEL_ERROR_UNSUPPORTED",
        6 => c"CUPEL_ERROR_CAPACITY",
        7 => c"CUPEL_ERROR_INTERNAL",
        _ => c"CUPEL_UNKNOWN_STATUS",
    };
    name.as_ptr()
}

/// A test hook for the panic boundary: panics inside the library on
/// purpose. The boundary catches it, so the call returns
/// CUPEL_ERROR_INTERNAL, `cupel_last_error()` gives the panic's message and
/// nothing unwinds into the caller. Harmless; useful to check that a host's
/// error handling copes with CUPEL_ERROR_INTERNAL.
#[no_mangle]
pub extern "C" fn cupel_debug_panic() -> cupel_status {
    guard(|| panic!("deliberate panic from cupel_debug_panic"))
}

/// The library version, "MAJOR.MINOR.PATCH" (a static string), equal to the
/// `CUPEL_VERSION_*` macros of the header it was built with.
#[no_mangle]
pub extern "C" fn cupel_version() -> *const c_char {
    const V: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    V.as_ptr().cast()
}

/// The ABI version of the library: 1 for this contract, equal to `CUPEL_ABI_VERSION`.
#[no_mangle]
pub extern "C" fn cupel_abi_version() -> u32 {
    CUPEL_ABI_VERSION
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_internal_with_a_message() {
        let status = guard(|| panic!("deliberate"));
        assert_eq!(status, CUPEL_ERROR_INTERNAL);
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
            let s = unsafe { CStr::from_ptr(cupel_status_str(code)) };
            assert_eq!(s.to_str().unwrap(), name);
        }
    }
}
