//! The C# binding (bindings/csharp): built with mcs, tests run under mono by
//! the binding's own test.sh, and the README's example run as printed.

mod common;

use std::process::Command;

fn test_sh(args: &[&str]) -> String {
    common::release_lib_dir();
    let script = common::root().join("bindings/csharp/test.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(script).args(args);
    common::run(&mut cmd, "bindings/csharp/test.sh")
}

#[test]
fn csharp_tests_pass_under_mono() {
    if !common::have_toolchain("mcs", "Debian's mono-mcs")
        || !common::have_toolchain("mono", "Debian's mono-runtime")
    {
        return;
    }
    let out = test_sh(&[]);
    print!("{out}");
    let last = out.lines().last().unwrap_or("");
    assert!(last.ends_with(" passed, 0 failed"), "{out}");
    assert!(out.contains("ok   ConcurrentSlicing"), "{out}");
}

#[test]
fn csharp_readme_example_runs_as_printed() {
    if !common::have_toolchain("mcs", "Debian's mono-mcs")
        || !common::have_toolchain("mono", "Debian's mono-runtime")
    {
        return;
    }
    let root = common::root();
    let readme = std::fs::read_to_string(root.join("bindings/csharp/README.md")).unwrap();
    let source = std::fs::read_to_string(root.join("bindings/csharp/example/Example.cs")).unwrap();
    assert_eq!(
        common::code_block_after(&readme, "## Example"),
        source,
        "the README's example is not bindings/csharp/example/Example.cs"
    );
    assert_eq!(
        common::code_block_after(&readme, "It prints:"),
        test_sh(&["--example"]),
        "the README does not show what the example prints"
    );
}
