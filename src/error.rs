//! The core error type. The FFI layer maps each variant to one `cupel_status`.

/// Everything that can go wrong in the core. Each message names the argument
/// and the offending value, ready to be shown to the caller as is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A required pointer argument was NULL (only produced by the FFI layer).
    #[error("{0}")]
    NullPointer(String),
    /// A value outside its domain.
    #[error("{0}")]
    InvalidArgument(String),
    /// The output buffer is too small; `needed` entries are required.
    #[error("{what}: capacity {capacity} is too small, {needed} entries are needed")]
    BufferTooSmall {
        what: &'static str,
        capacity: usize,
        needed: usize,
    },
    /// A require count could not be met and scarcity is `Error`.
    #[error("{0}")]
    Scarcity(String),
    /// The operation is not defined for this slicer.
    #[error("{0}")]
    Unsupported(String),
    /// The work would exceed the slicer's memory limit (or allocation failed).
    #[error("{0}")]
    Capacity(String),
    /// The pipeline's selection exceeds the target and the overflow
    /// strategy is Throw.
    #[error("{0}")]
    Overflow(String),
    /// A bug caught at the boundary.
    #[error("{0}")]
    Internal(String),
}

/// Shorthand for `Err(Error::InvalidArgument(format!(...)))`.
macro_rules! invalid {
    ($($arg:tt)*) => {
        Err($crate::error::Error::InvalidArgument(format!($($arg)*)))
    };
}
pub(crate) use invalid;

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The same error with its message rewritten by `f` (a buffer error
    /// has no free message and is kept as it is).
    pub fn map_message(self, f: impl FnOnce(&str) -> String) -> Error {
        match self {
            Error::NullPointer(m) => Error::NullPointer(f(&m)),
            Error::InvalidArgument(m) => Error::InvalidArgument(f(&m)),
            Error::Scarcity(m) => Error::Scarcity(f(&m)),
            Error::Unsupported(m) => Error::Unsupported(f(&m)),
            Error::Capacity(m) => Error::Capacity(f(&m)),
            Error::Overflow(m) => Error::Overflow(f(&m)),
            Error::Internal(m) => Error::Internal(f(&m)),
            e @ Error::BufferTooSmall { .. } => e,
        }
    }
}
