#![no_main]
//! Arbitrary bytes through the tokenizers' C ABI: counts equal tiktoken's
//! (o200k_base, cl100k_base), invalid UTF-8 is refused at its offset, and
//! truncation keeps its promises (see src/driver.rs, `tokenize`).

#[path = "../src/driver.rs"]
mod driver;

libfuzzer_sys::fuzz_target!(|data: &[u8]| driver::tokenize(data));
