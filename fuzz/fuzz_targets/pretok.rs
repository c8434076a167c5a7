#![no_main]
//! Arbitrary bytes as UTF-8 (lossily): each hand-written pre-tokenizer and
//! the general engine give exactly fancy-regex's pieces (see
//! src/driver.rs, `pretok`).

#[path = "../src/driver.rs"]
mod driver;

libfuzzer_sys::fuzz_target!(|data: &[u8]| driver::pretok(data));
