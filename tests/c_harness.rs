//! Builds each C suite in tests/c against the shared library and runs it.
//! A suite prints "<name>: N passed, N failed" and exits non-zero on failure.

mod common;

use std::process::Command;

fn run_suite(name: &str) {
    let src = common::root().join("tests/c").join(format!("{name}.c"));
    let exe = common::out_dir("c_harness").join(name);
    common::build_c_program(&[&src], &exe, &[]);
    let out = common::run(&mut Command::new(&exe), name);
    print!("{out}");
    assert!(out.contains(" passed, 0 failed"), "{out}");
}

#[test]
fn c_basics() {
    run_suite("test_basics");
}

#[test]
fn c_slicing() {
    run_suite("test_slicing");
}

#[test]
fn c_counts_stream_simulation() {
    run_suite("test_counts");
}
