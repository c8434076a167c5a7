#![no_main]
//! Arbitrary bytes, and documents built from the format's keys, read as
//! policy and budget documents (see src/driver.rs, `policy_document`).

#[path = "../src/driver.rs"]
mod driver;

libfuzzer_sys::fuzz_target!(|data: &[u8]| driver::policy_document(data));
