//! Builds each C suite in tests/c against the shared library and runs it:
//! one suite per feature. A suite prints "<name>: N passed, N failed" and
//! exits non-zero on failure.

mod common;

use std::process::Command;

fn run_suite(name: &str) {
    let src = common::root().join("tests/c").join(format!("{name}.c"));
    let exe = common::out_dir("c_harness").join(name);
    common::build_c_program(&[&src], &exe, &[]);
    let out = common::run(
        Command::new(&exe).env("CUPEL_CONTRACT", common::contract::path()),
        name,
    );
    print!("{out}");
    assert!(out.contains(" passed, 0 failed"), "{out}");
}

#[test]
fn c_boundary() {
    run_suite("test_boundary");
}

#[test]
fn c_items() {
    run_suite("test_items");
}

#[test]
fn c_budget() {
    run_suite("test_budget");
}

#[test]
fn c_greedy() {
    run_suite("test_greedy");
}

#[test]
fn c_knapsack() {
    run_suite("test_knapsack");
}

#[test]
fn c_quota() {
    run_suite("test_quota");
}

#[test]
fn c_slice() {
    run_suite("test_slice");
}

#[test]
fn c_count_slicers() {
    run_suite("test_count_slicers");
}

#[test]
fn c_report() {
    run_suite("test_report");
}

#[test]
fn c_stream() {
    run_suite("test_stream");
}

#[test]
fn c_simulation() {
    run_suite("test_simulation");
}

#[test]
fn c_scorers() {
    run_suite("test_scorers");
}

#[test]
fn c_pipeline() {
    run_suite("test_pipeline");
}

#[test]
fn c_groups() {
    run_suite("test_groups");
}

#[test]
fn c_text() {
    run_suite("test_text");
}

#[test]
fn c_shrink() {
    run_suite("test_shrink");
}

#[test]
fn c_policy() {
    run_suite("test_policy");
}

/// The binding contract through the C ABI: every row that names c.
#[test]
fn c_contract() {
    run_suite("test_contract");
    let exe = common::out_dir("c_harness").join("test_contract");
    let out = common::run(Command::new(&exe).arg(common::contract::path()), "contract");
    common::contract::check_summary("c", &out);
}

#[test]
fn every_c_suite_has_a_test() {
    let src = std::fs::read_to_string(file!()).unwrap();
    for e in std::fs::read_dir(common::root().join("tests/c")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if let Some(suite) = name.strip_suffix(".c") {
            assert!(
                src.contains(&format!("run_suite(\"{suite}\")")),
                "{name} is never run"
            );
        }
    }
}
