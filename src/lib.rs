//! libcupel: decides what goes into a language model's context window.
//!
//! A host hands in candidates (tokens, score, kind, and optionally content,
//! timestamp, priority, tags, metadata, a pinned flag, a keep-together
//! group) and a token budget; the Cupel pipeline classifies, scores,
//! deduplicates, sorts, slices and places them ([`pipeline`]) and reports
//! why each was kept or dropped. The core (everything but [`ffi`]) is safe
//! Rust over indices into one item store; [`ffi`] is the C ABI, which with
//! the SIMD kernels is the only place with `unsafe`.

#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

pub mod analytics;
pub mod budget;
pub mod choice;
pub mod error;
pub mod ffi;
pub mod group;
pub mod items;
pub mod kind;
pub mod pipeline;
pub mod placer;
pub mod policy;
pub mod scorer;
pub mod session;
pub mod slicer;
pub mod sort;
pub mod stream;
#[doc(hidden)]
pub mod testing;
pub mod text;
pub mod trace;

pub use budget::{Budget, SliceBudget};
pub use error::{Error, Result};
pub use items::{Items, NewItem};
pub use pipeline::{Engine, Outcome};
pub use session::Session;
pub use slicer::{
    CountEntry, CountQuota, Knapsack, Quota, QuotaEntry, Scarcity, Shortfall, Slicer,
};
pub use stream::Stream;

/// Extra work on `n` items that exists only in a build with the feature
/// "planted-slowdown": tests/perf_guard.sh builds it to prove that its
/// instruction-count guard fails on a slowdown. Nothing otherwise.
#[cfg(feature = "planted-slowdown")]
pub(crate) fn planted_slowdown(n: usize) {
    let mut x = 0u64;
    for i in 0..n as u64 * 12 {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
    }
}

#[cfg(not(feature = "planted-slowdown"))]
#[inline(always)]
pub(crate) fn planted_slowdown(_n: usize) {}
