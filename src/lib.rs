//! libcupel: the Slice stage of the Cupel context pipeline.
//!
//! A host hands in scored candidates (tokens, score, kind) and a token
//! budget; a slicer chooses which candidates fit. The core (everything but
//! [`ffi`]) is safe Rust over indices; [`ffi`] is the C ABI, the only place
//! with `unsafe`.

#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

pub mod budget;
pub mod error;
pub mod ffi;
pub mod group;
pub mod items;
pub mod kind;
pub mod pipeline;
pub mod placer;
pub mod scorer;
pub mod slicer;
pub mod sort;
pub mod stream;
#[doc(hidden)]
pub mod testing;

pub use budget::{Budget, SliceBudget};
pub use error::{Error, Result};
pub use items::{Items, NewItem};
pub use pipeline::{Engine, Outcome};
pub use slicer::{
    CountEntry, CountQuota, Knapsack, Quota, QuotaEntry, Scarcity, Shortfall, Slicer,
};
pub use stream::Stream;
