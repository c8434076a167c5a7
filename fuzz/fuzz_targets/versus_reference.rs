#![no_main]
//! Small well-formed cases sliced by libcupel (through the C ABI) and by the
//! published cupel 1.2.0 crate: same selection (see src/driver.rs).

#[path = "../src/driver.rs"]
mod driver;

libfuzzer_sys::fuzz_target!(|data: &[u8]| driver::versus_reference(data));
