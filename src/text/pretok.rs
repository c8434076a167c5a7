//! Pre-tokenization (placeholder).
