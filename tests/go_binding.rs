//! The Go binding (bindings/go): go vet, the race-detector test suite, and
//! the README's example run as printed.

mod common;

use std::process::Command;

fn go(args: &[&str]) -> String {
    common::release_lib_dir();
    let dir = common::root().join("bindings/go");
    let mut cmd = Command::new("go");
    cmd.args(args).current_dir(&dir).env("CGO_ENABLED", "1");
    common::run(&mut cmd, &format!("go {}", args.join(" ")))
}

#[test]
fn go_vet_and_race_tests_pass() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    go(&["vet", "./..."]);
    let out = go(&["test", "-race", "-count=1", "-v", "./..."]);
    print!("{out}");
    assert!(out.contains("--- PASS: TestConcurrentSlicing"), "{out}");
    assert!(out.contains("--- PASS: TestForcedGC"), "{out}");
    assert!(out.contains("--- PASS: TestNilHandlesAreErrors"), "{out}");
    assert!(!out.contains("--- FAIL"), "{out}");
}

#[test]
fn go_readme_example_runs_as_printed() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let root = common::root();
    let readme = std::fs::read_to_string(root.join("bindings/go/README.md")).unwrap();
    let source = std::fs::read_to_string(root.join("bindings/go/example/main.go")).unwrap();
    assert_eq!(
        common::code_block_after(&readme, "## Example"),
        source,
        "the README's example is not bindings/go/example/main.go"
    );
    let out = go(&["run", "./example"]);
    assert_eq!(
        common::code_block_after(&readme, "It prints:"),
        out,
        "the README does not show what the example prints"
    );
}
