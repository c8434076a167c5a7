//! `ffi_fn!`: the only way an `extern "C"` function of libcupel is written.
//!
//! The macro *is* the export: it writes `#[no_mangle] pub extern "C"` and
//! wraps the body in the panic guard, so no export can skip the guard. A
//! test (`tests/header.rs`) checks that no `no_mangle` or `extern "C" fn`
//! is written anywhere else in `src/` and that the library's exported
//! symbols, the header's functions and the `ffi_fn!` invocations are the
//! same set.
//!
//! Three shapes (`unsafe fn` for the exports that take pointers):
//!
//! ```text
//! ffi_fn! {
//!     /// docs (copied into the header)
//!     unsafe fn cupel_x(a: *const T) -> cupel_status {
//!         /* a Result<()>: an error becomes its status and message */
//!     }
//! }
//! ffi_fn! { fn cupel_y() -> T [fallback] { /* a T; a panic gives fallback */ } }
//! ffi_fn! { unsafe fn cupel_z(p: *mut T) { /* no result; a panic is recorded */ } }
//! ```
//!
//! A panic in any of them is caught and recorded for `cupel_last_error()`
//! (`CUPEL_ERROR_INTERNAL` where a status is returned).
//!
//! cbindgen does not expand macros on a stable toolchain, so `build.rs`
//! hands it a copy of `src/` in which each `ffi_fn!` invocation is written
//! out as the plain `extern "C"` function (same docs, same signature).

macro_rules! ffi_fn {
    ($(#[$attr:meta])* unsafe fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $($rest:tt)*) => {
        ffi_fn!(@export [$(#[$attr])*
            /// # Safety
            ///
            /// Each pointer argument is NULL or valid as this function's
            /// documentation in `cupel.h` says: a handle from its `_new`
            /// function and not yet freed, an array of the given length, a
            /// NUL-terminated string, or writable memory for an
            /// out-parameter. NULL is checked; validity cannot be.
        ] [unsafe] $name [$($arg: $ty),*] $($rest)*);
    };
    ($(#[$attr:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $($rest:tt)*) => {
        ffi_fn!(@export [$(#[$attr])*] [] $name [$($arg: $ty),*] $($rest)*);
    };
    (@export [$($attr:tt)*] [$($q:tt)*] $name:ident [$($args:tt)*]
        -> cupel_status $body:block) => {
        $($attr)*
        #[no_mangle]
        pub $($q)* extern "C" fn $name($($args)*) -> $crate::ffi::cupel_status {
            $crate::ffi::guard(|| $body)
        }
    };
    (@export [$($attr:tt)*] [$($q:tt)*] $name:ident [$($args:tt)*]
        -> $ret:ty [$fallback:expr] $body:block) => {
        $($attr)*
        #[no_mangle]
        pub $($q)* extern "C" fn $name($($args)*) -> $ret {
            $crate::ffi::guard_value($fallback, || $body)
        }
    };
    (@export [$($attr:tt)*] [$($q:tt)*] $name:ident [$($args:tt)*] $body:block) => {
        $($attr)*
        #[no_mangle]
        pub $($q)* extern "C" fn $name($($args)*) {
            $crate::ffi::guard_value((), || $body)
        }
    };
}
