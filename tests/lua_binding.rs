//! The LuaJIT binding (bindings/lua): its cdef file matches the header, its
//! test suite passes under Debian's luajit, and the README's example is the
//! file that runs.

mod common;

use std::process::Command;

fn luajit(script: &str) -> String {
    let lib = common::lib_dir().join("libcupel.so");
    let root = common::root();
    common::run(
        Command::new("luajit")
            .arg(root.join(script))
            .env("CUPEL_LIB", lib),
        script,
    )
}

#[test]
fn cdef_is_the_header_without_comments_and_preprocessor_lines() {
    // build.rs derives it from the fresh header; a stale commit fails here.
    let generated = std::fs::read_to_string(env!("CUPEL_GENERATED_CDEF")).unwrap();
    let committed = std::fs::read_to_string(env!("CUPEL_COMMITTED_CDEF")).unwrap();
    assert!(
        committed == generated,
        "bindings/lua/cupel_cdef.h was stale when this build started: commit the regenerated one"
    );
    assert!(!generated.lines().any(|l| l.trim_start().starts_with('#')));
    let header = std::fs::read_to_string(common::root().join("include/cupel.h")).unwrap();
    for name in header.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if name.starts_with("cupel_") && header.contains(&format!("{name}(")) {
            assert!(
                generated.contains(&format!("{name}(")),
                "{name} is not in the cdef"
            );
        }
    }
}

#[test]
fn lua_tests_pass() {
    if !common::have_toolchain("luajit", "Debian's luajit") {
        return;
    }
    let out = luajit("bindings/lua/test.lua");
    print!("{out}");
    assert!(out.contains(" passed, 0 failed"), "{out}");
    assert!(
        out.contains("ok   a tool call and its result are never split"),
        "{out}"
    );
}

#[test]
fn lua_readme_example_runs_as_printed() {
    if !common::have_toolchain("luajit", "Debian's luajit") {
        return;
    }
    let root = common::root();
    let readme = std::fs::read_to_string(root.join("bindings/lua/README.md")).unwrap();
    let source = std::fs::read_to_string(root.join("bindings/lua/example.lua")).unwrap();
    assert_eq!(common::code_block_after(&readme, "## Example"), source);
    let out = luajit("bindings/lua/example.lua");
    assert!(out.starts_with("placed: 1 5 6\n"), "{out}");
}
