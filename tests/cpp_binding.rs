//! Builds the C++ wrapper's test and example (C++17, -Werror) and runs them.

mod common;

use std::path::Path;
use std::process::Command;

fn build_cpp(src: &Path, exe: &Path) {
    common::build_cpp_against(src, exe, &common::lib_dir(), &["-pedantic"]);
}

#[test]
fn cpp_wrapper_tests_pass() {
    let exe = common::out_dir("cpp").join("test_cupel_cpp");
    build_cpp(&common::root().join("tests/cpp/test_cupel.cpp"), &exe);
    let out = common::run(&mut Command::new(&exe), "test_cupel_cpp");
    print!("{out}");
    assert!(out.contains(" passed, 0 failed"), "{out}");
}

#[test]
fn cpp_example_runs() {
    let exe = common::out_dir("cpp").join("example");
    build_cpp(&common::root().join("bindings/cpp/example.cpp"), &exe);
    let out = common::run(&mut Command::new(&exe), "example");
    assert!(
        out.contains("greedy chose item 1\ngreedy chose item 2\n"),
        "{out}"
    );
    let readme = std::fs::read_to_string(common::root().join("bindings/cpp/README.md")).unwrap();
    assert!(
        readme.contains(&out),
        "bindings/cpp/README.md does not show what the example prints:\n{out}"
    );
    assert!(
        out.contains("error: CUPEL_ERROR_INVALID_ARGUMENT: target_tokens 20 > max_tokens 10"),
        "{out}"
    );
}
