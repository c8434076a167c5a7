//! `cupel_alloc` / `cupel_dealloc`: memory for hosts that have no C
//! allocator of their own, such as JavaScript over the WebAssembly build
//! (`bindings/js`), which must place strings and arrays in the module's
//! memory before passing pointers to the other functions.

use std::alloc::Layout;

/// Every block is aligned for any argument type of the ABI (int64_t, double).
const ALIGN: usize = 8;

fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.max(1), ALIGN).ok()
}

ffi_fn! {
    /// Allocates `size` bytes aligned to 8, uninitialised, from the library's
    /// allocator; NULL when it cannot (or `size` is too large). Free with
    /// `cupel_dealloc(ptr, size)`, passing the same `size`. Meant for hosts
    /// without a C allocator of their own (the WebAssembly build's JavaScript
    /// host); C programs use malloc.
    fn cupel_alloc(size: usize) -> *mut u8 [std::ptr::null_mut()] {
        match layout(size) {
            // SAFETY: the layout has a non-zero size.
            Some(l) => unsafe { std::alloc::alloc(l) },
            None => std::ptr::null_mut(),
        }
    }
}

ffi_fn! {
    /// Frees a block from `cupel_alloc`; `size` must be the size it was
    /// allocated with. NULL is a no-op.
    unsafe fn cupel_dealloc(ptr: *mut u8, size: usize) {
        if ptr.is_null() {
            return;
        }
        if let Some(l) = layout(size) {
            // SAFETY: `ptr` came from `cupel_alloc(size)` (the caller's
            // promise), which allocated it with this very layout.
            unsafe { std::alloc::dealloc(ptr, l) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_writable_and_freed() {
        for size in [0usize, 1, 7, 8, 1000] {
            let p = cupel_alloc(size);
            assert!(!p.is_null(), "size {size}");
            assert_eq!(p as usize % ALIGN, 0, "size {size}");
            // SAFETY: `p` holds max(size, 1) bytes from cupel_alloc.
            unsafe {
                p.write_bytes(0xAB, size.max(1));
                cupel_dealloc(p, size);
            }
        }
        // SAFETY: NULL is a no-op.
        unsafe { cupel_dealloc(std::ptr::null_mut(), 8) };
    }

    #[test]
    fn an_impossible_size_gives_null() {
        assert!(cupel_alloc(usize::MAX).is_null());
        assert!(cupel_alloc(isize::MAX as usize).is_null());
    }
}
