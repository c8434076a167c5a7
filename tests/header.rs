//! The committed header: fresh, complete, versioned, and clean C99 and C++.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

fn header() -> String {
    std::fs::read_to_string(common::root().join("include/cupel.h")).unwrap()
}

/// Names of the functions a text declares or mentions as `cupel_x(`.
fn functions(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("cupel_") {
        let rest = &text[i..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if rest[end..].starts_with('(')
            && (i == 0 || !text.as_bytes()[i - 1].is_ascii_alphanumeric())
        {
            out.insert(rest[..end].to_string());
        }
    }
    out
}

#[test]
fn committed_header_matches_a_fresh_generation() {
    let generated = std::fs::read_to_string(env!("CUPEL_GENERATED_HEADER")).unwrap();
    assert_eq!(
        header(),
        generated,
        "include/cupel.h differs from what build.rs generated"
    );
    // build.rs rewrote include/cupel.h; git tells whether that changed the committed file.
    let root = common::root();
    if !root.join(".git").exists() {
        assert!(
            std::env::var("CI").is_err(),
            "CI must run from a git checkout to check the committed header"
        );
        eprintln!("SKIPPED: not a git checkout, cannot compare with the committed header");
        return;
    }
    let out = Command::new("git")
        .args(["diff", "--exit-code", "HEAD", "--", "include/cupel.h"])
        .current_dir(&root)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "the committed include/cupel.h is stale; commit the regenerated one:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn header_declares_every_function_of_the_abi_contract() {
    let abi =
        std::fs::read_to_string(common::root().join("../shared/abi.md")).expect("../shared/abi.md");
    let want = functions(&abi);
    assert!(want.len() >= 35, "abi.md lists {} functions", want.len());
    let have = functions(&header());
    let missing: Vec<_> = want.difference(&have).collect();
    assert!(
        missing.is_empty(),
        "missing from include/cupel.h: {missing:?}"
    );
}

#[test]
fn version_macros_agree_with_cargo_toml() {
    let h = header();
    for (part, value) in [
        ("MAJOR", env!("CARGO_PKG_VERSION_MAJOR")),
        ("MINOR", env!("CARGO_PKG_VERSION_MINOR")),
        ("PATCH", env!("CARGO_PKG_VERSION_PATCH")),
    ] {
        let line = format!("#define CUPEL_VERSION_{part} {value}\n");
        assert!(h.contains(&line), "header lacks {line:?}");
    }
    assert!(h.contains("#define CUPEL_ABI_VERSION 1\n"));
    let v = unsafe { std::ffi::CStr::from_ptr(cupel::ffi::cupel_version()) };
    assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    assert_eq!(cupel::ffi::cupel_abi_version(), 1);
}

/// A program that includes the header and takes the address of every
/// function it declares, so compiling and linking it checks both.
fn every_function_program() -> String {
    let fns = functions(&header());
    let mut src = String::from("#include \"cupel.h\"\n#include <stdio.h>\ntypedef void (*fn_t)(void);\nint main(void) {\n  fn_t fns[] = {\n");
    for f in &fns {
        src.push_str(&format!("    (fn_t){f},\n"));
    }
    src.push_str("  };\n  printf(\"%u functions\\n\", (unsigned)(sizeof fns / sizeof fns[0]));\n  return fns[0] == 0;\n}\n");
    src
}

fn compile_and_run(cpp: bool, std: &str) {
    let dir = common::out_dir("header");
    let ext = if cpp { "cpp" } else { "c" };
    let src = dir.join(format!("all_{std}.{ext}"));
    std::fs::write(&src, every_function_program()).unwrap();
    let exe = dir.join(format!("all_{std}"));
    let lib = common::lib_dir();
    let mut cmd = common::compiler(cpp);
    cmd.arg(format!("-std={std}"))
        .args(["-Wall", "-Wextra", "-pedantic", "-Werror"])
        .arg("-I")
        .arg(common::root().join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lcupel");
    common::run(&mut cmd, &format!("compiling the header as {std}"));
    let out = common::run(&mut Command::new(&exe), "running it");
    let n: usize = out.split_whitespace().next().unwrap().parse().unwrap();
    assert_eq!(n, functions(&header()).len());
}

#[test]
fn header_compiles_as_c99() {
    compile_and_run(false, "c99");
}

#[test]
fn header_compiles_as_cpp() {
    compile_and_run(true, "c++11");
    compile_and_run(true, "c++17");
}
