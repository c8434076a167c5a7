//! Every binding's demo runs the C demo's pipeline (examples/demo.c) on the
//! same bundled data and prints the same selection: its "placed:" line
//! equals the C demo's. (The Python demo runs from its installed package in
//! tests/python_binding.rs.) The demo's policy file, loaded in C and in
//! Python, selects the same context.

mod common;

use std::process::Command;

/// The "placed:" line of a program's output.
pub fn placed_line(out: &str) -> String {
    out.lines()
        .find(|l| l.starts_with("placed:"))
        .unwrap_or_else(|| panic!("no placed: line in\n{out}"))
        .to_string()
}

/// The C demo's output, built and run as the README says (once: the tests
/// run in parallel and the script writes one executable).
fn c_demo() -> &'static str {
    static OUT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    OUT.get_or_init(|| {
        let root = common::root();
        common::run(
            Command::new("bash").arg(root.join("examples/demo.sh")),
            "examples/demo.sh",
        )
    })
}

/// The C demo's "placed:" line.
pub fn c_demo_line() -> String {
    let line = placed_line(c_demo());
    assert!(line.split(' ').count() > 20, "{line}");
    line
}

/// The line of `out` that starts with `prefix`.
fn line_of(out: &str, prefix: &str) -> String {
    out.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line in\n{out}"))
        .to_string()
}

/// examples/policy.json loaded in C (the demo's section 0c) and in Python
/// (examples/policy_select.py, through the one-call path) selects the same
/// context.
#[test]
fn the_policy_file_selects_the_same_in_c_and_python() {
    if !common::have_toolchain("python3", "Debian's python3") {
        return;
    }
    let c = line_of(c_demo(), "Selected (prompt order):");
    assert!(c.split(' ').count() > 10, "{c}");
    let root = common::root();
    let out = common::run(
        Command::new("python3")
            .arg(root.join("examples/policy_select.py"))
            .env("CUPEL_LIB", root.join("target/release/libcupel.so")),
        "examples/policy_select.py",
    );
    assert_eq!(line_of(&out, "Selected (prompt order):"), c);
}

fn data() -> std::path::PathBuf {
    common::root().join("examples/data/rag_candidates.csv")
}

#[test]
fn cpp_demo_places_what_the_c_demo_places() {
    let exe = common::out_dir("binding_demos").join("cpp_demo");
    common::build_cpp_program(&common::root().join("bindings/cpp/demo.cpp"), &exe);
    let out = common::run(Command::new(&exe).arg(data()), "the C++ demo");
    assert_eq!(placed_line(&out), c_demo_line());
}

#[test]
fn go_demo_places_what_the_c_demo_places() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    common::release_lib_dir();
    let out = common::run(
        Command::new("go")
            .args(["run", "./demo"])
            .arg(data())
            .current_dir(common::root().join("bindings/go"))
            .env("CGO_ENABLED", "1"),
        "the Go demo",
    );
    assert_eq!(placed_line(&out), c_demo_line());
}

#[test]
fn csharp_demo_places_what_the_c_demo_places() {
    if !common::have_toolchain("mono", "Debian's mono-runtime and mono-mcs") {
        return;
    }
    common::release_lib_dir();
    let out = common::run(
        Command::new("bash")
            .arg(common::root().join("bindings/csharp/test.sh"))
            .arg("--demo"),
        "the C# demo",
    );
    assert_eq!(placed_line(&out), c_demo_line());
}
