//! Text in: exact token counting (`../shared/abi-text.md`, "Tokenizers").
//!
//! A count is tiktoken's `encode_ordinary` for a vocabulary: the text is
//! split into pieces by a pre-tokenization pattern (`pretok`, with the
//! character classes of `unicode`), and each piece is byte-pair encoded
//! against the vocabulary's ranks ([`bpe`] over [`vocab`]).

pub mod bpe;
pub mod pretok;
pub mod tokenizer;
pub mod unicode;
mod unicode_tables;
pub mod vocab;
