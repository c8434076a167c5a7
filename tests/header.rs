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
    // build.rs keeps the committed header as it was before it regenerated
    // it: a commit whose header is stale fails here, with or without git.
    let generated = std::fs::read_to_string(env!("CUPEL_GENERATED_HEADER")).unwrap();
    let committed = std::fs::read_to_string(env!("CUPEL_COMMITTED_HEADER")).unwrap();
    assert!(
        committed == generated,
        "include/cupel.h was stale when this build started: commit the regenerated one"
    );
    // And what git holds, in a checkout (build.rs rewrites the working copy).
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

/// Every name the header defines: macros, types, enum constants, functions.
fn declared_names(h: &str) -> BTreeSet<String> {
    let mut names = functions(h);
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut in_enum = false;
    for line in h.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("#define ") {
            names.insert(word(rest));
        }
        for kw in ["typedef enum ", "typedef struct ", "enum ", "struct "] {
            if let Some(rest) = t.strip_prefix(kw) {
                names.insert(word(rest));
            }
        }
        if t.starts_with("} ") && t.ends_with(';') {
            in_enum = false;
            names.insert(word(&t[2..]));
        }
        if t.starts_with("typedef enum") || t.starts_with("enum ") && t.ends_with('{') {
            in_enum = true;
        } else if in_enum && !t.starts_with('*') && !t.starts_with("/*") && !t.is_empty() {
            let w = word(t);
            if !w.is_empty() {
                names.insert(w);
            }
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

#[test]
fn header_is_public_api_only() {
    let h = header();
    let names = declared_names(&h);
    assert!(names.contains("CUPEL_ERROR_CAPACITY") && names.contains("cupel_quota"));
    assert!(
        names.len() > 60,
        "only {} names found: {names:?}",
        names.len()
    );
    let stray: Vec<_> = names
        .iter()
        .filter(|n| !(n.starts_with("cupel_") || n.starts_with("CUPEL_")))
        .collect();
    assert!(
        stray.is_empty(),
        "header names without the prefix: {stray:?}"
    );
    // No Rust doc markup (intra-doc links) in the comments.
    for marker in ["[`", "](", "crate::", "Self::"] {
        assert!(
            !h.contains(marker),
            "header comment has Rust markup {marker:?}"
        );
    }
    assert!(
        !h.contains("cupel_debug_panic"),
        "test hooks stay out of the header"
    );
}

/// The `fn cupel_*` names defined inside `ffi_fn! { ... }` blocks of src/.
fn ffi_fn_names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for file in rust_sources(&common::root().join("src")) {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut inside = false;
        for line in text.lines() {
            if line == "ffi_fn! {" {
                inside = true;
            } else if line == "}" {
                inside = false;
            } else if inside {
                let t = line.trim_start();
                let t = t.strip_prefix("unsafe ").unwrap_or(t);
                if let Some(rest) = t.strip_prefix("fn cupel_") {
                    let end = rest.find('(').unwrap();
                    names.insert(format!("cupel_{}", &rest[..end]));
                }
            }
        }
    }
    names
}

fn rust_sources(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(rust_sources(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

#[test]
fn every_export_is_written_with_ffi_fn() {
    // Nothing but the macro may make an export: no `no_mangle`,
    // `export_name` or `extern "C" fn` in code outside src/ffi/macros.rs.
    for file in rust_sources(&common::root().join("src")) {
        if file.ends_with("ffi/macros.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap();
            // A callback's function-pointer type is no export.
            if code.contains("Option<unsafe extern \"C\" fn(") {
                continue;
            }
            for banned in ["no_mangle", "export_name", "extern \"C\" fn"] {
                assert!(
                    !code.contains(banned),
                    "{}:{}: `{banned}` outside ffi_fn!: {line}",
                    file.display(),
                    n + 1
                );
            }
        }
    }
    // The macro's exports are the header's functions (the test hook aside)
    // and the shared library's exported cupel_ symbols.
    let mut made = ffi_fn_names();
    assert!(made.len() >= 40, "ffi_fn! makes {} functions", made.len());
    assert!(
        made.remove("cupel_debug_panic"),
        "the test hook is an ffi_fn!"
    );
    assert_eq!(made, functions(&header()), "ffi_fn! exports vs header");
    let so = common::lib_dir().join("libcupel.so");
    let out = common::run(
        Command::new("nm").args(["-D", "--defined-only"]).arg(&so),
        "nm -D",
    );
    let exported: BTreeSet<String> = out
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|s| s.starts_with("cupel_"))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        exported, made,
        "libcupel.so's cupel_ symbols vs ffi_fn! exports"
    );
}

#[test]
fn header_declares_every_function_of_the_abi_contract() {
    // abi.md and its pipeline additions, abi-pipeline.md.
    let mut want = BTreeSet::new();
    for file in ["abi.md", "abi-pipeline.md"] {
        let path = common::root().join("../shared").join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let fns = functions(&text);
        assert!(fns.len() >= 30, "{file} lists {} functions", fns.len());
        want.extend(fns);
    }
    for name in [
        "cupel_reason",
        "cupel_decision",
        "cupel_overflow",
        "CUPEL_ERROR_OVERFLOW",
        "cupel_kind_weight",
        "cupel_tag_weight",
    ] {
        assert!(header().contains(name), "header lacks {name}");
    }
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
    assert!(h.contains("#define CUPEL_ABI_VERSION 2\n"));
    let v = unsafe { std::ffi::CStr::from_ptr(cupel::ffi::cupel_version()) };
    assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    assert_eq!(cupel::ffi::cupel_abi_version(), 2);
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
