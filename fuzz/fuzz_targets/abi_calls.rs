#![no_main]
//! Arbitrary sequences of C ABI calls with arbitrary values; invariants
//! checked after every successful call (see src/driver.rs).

#[path = "../src/driver.rs"]
mod driver;

libfuzzer_sys::fuzz_target!(|data: &[u8]| driver::abi_program(data));
