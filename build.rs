//! Generates include/cupel.h with cbindgen (version pinned in Cargo.toml).
//! The header is committed; tests/header.rs fails when it is stale.
//!
//! Every export is written with the `ffi_fn!` macro (src/ffi/macros.rs),
//! which cbindgen cannot expand on a stable toolchain; so cbindgen reads a
//! copy of src/ in which each invocation is written out as the plain
//! `extern "C"` function it expands to (docs and signature unchanged), and
//! only the boundary module src/ffi, so no core item can reach the header.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// Copies the `.rs` files under `from` to `to`, with [`expand_ffi_fn`].
fn mirror(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if path.is_dir() {
            mirror(&path, &dest);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = fs::read_to_string(&path).unwrap();
            fs::write(&dest, expand_ffi_fn(&text)).unwrap();
        }
    }
}

/// Writes each top-level `ffi_fn! { ... }` out as the function it defines:
/// the wrapper lines go, `[unsafe] fn` becomes `#[no_mangle] pub [unsafe]
/// extern "C" fn`, and a `[fallback]` after the return type goes.
fn expand_ffi_fn(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut inside, mut in_signature) = (false, false);
    for line in text.lines() {
        let mut line = line.to_string();
        if !inside && line == "ffi_fn! {" {
            inside = true;
            continue;
        }
        if inside && line == "}" {
            inside = false;
            continue;
        }
        if inside {
            let trimmed = line.trim_start();
            let indent = &line[..line.len() - trimmed.len()];
            if trimmed.starts_with("unsafe fn cupel_") || trimmed.starts_with("fn cupel_") {
                line = format!("{indent}#[no_mangle]\n{indent}pub {}", trimmed).replacen(
                    "fn cupel_",
                    "extern \"C\" fn cupel_",
                    1,
                );
                in_signature = true;
            }
            if in_signature && line.ends_with('{') {
                in_signature = false;
                if let (true, Some(at)) = (line.ends_with("] {"), line.rfind(" [")) {
                    line = format!("{} {{", &line[..at]);
                }
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!(
        "cargo:rustc-env=CUPEL_BUILD_TARGET={}",
        env::var("TARGET").unwrap()
    );

    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let v = |part: &str| env::var(format!("CARGO_PKG_VERSION_{part}")).unwrap();
    config.after_includes = Some(format!(
        "\n/** Version of this header; cupel_version() gives the library's. */\n\
         #define CUPEL_VERSION_MAJOR {}\n#define CUPEL_VERSION_MINOR {}\n#define CUPEL_VERSION_PATCH {}\n\
         #define CUPEL_VERSION_STRING \"{}\"",
        v("MAJOR"),
        v("MINOR"),
        v("PATCH"),
        env::var("CARGO_PKG_VERSION").unwrap()
    ));
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    // cbindgen reads the boundary module only: what the header shows is
    // what src/ffi exports, and nothing of the core can leak into it.
    let src = out_dir.join("header-src");
    let _ = fs::remove_dir_all(&src);
    mirror(&root.join("src/ffi"), &src);
    let header = match cbindgen::Builder::new()
        .with_src(src.join("mod.rs"))
        .with_config(config)
        .generate()
    {
        Ok(b) => b,
        Err(e) => {
            // A syntax error in src/ is reported by rustc with a better message.
            println!("cargo:warning=cbindgen could not generate the header: {e}");
            return;
        }
    };
    header.write_to_file(out_dir.join("cupel.h"));
    // The committed header as it was before this build rewrote it: the
    // header test compares it with the fresh generation, so a stale commit
    // fails even outside a git checkout.
    let committed = root.join("include/cupel.h");
    let before = fs::read(&committed).unwrap_or_default();
    fs::write(out_dir.join("cupel.committed.h"), before).unwrap();
    println!(
        "cargo:rustc-env=CUPEL_COMMITTED_HEADER={}",
        out_dir.join("cupel.committed.h").display()
    );
    println!(
        "cargo:rustc-env=CUPEL_GENERATED_HEADER={}",
        out_dir.join("cupel.h").display()
    );
    // Writes only when the content changed, so the committed file keeps its mtime.
    header.write_to_file(root.join("include/cupel.h"));

    // The same declarations for LuaJIT's ffi.cdef (bindings/lua), which
    // takes no preprocessor lines; committed, and checked like the header.
    let text = fs::read_to_string(out_dir.join("cupel.h")).unwrap();
    let cdef = cdef_of(&text);
    fs::write(out_dir.join("cupel_cdef.h"), &cdef).unwrap();
    let committed = root.join("bindings/lua/cupel_cdef.h");
    let before = fs::read(&committed).unwrap_or_default();
    fs::write(out_dir.join("cupel_cdef.committed.h"), &before).unwrap();
    println!(
        "cargo:rustc-env=CUPEL_COMMITTED_CDEF={}",
        out_dir.join("cupel_cdef.committed.h").display()
    );
    println!(
        "cargo:rustc-env=CUPEL_GENERATED_CDEF={}",
        out_dir.join("cupel_cdef.h").display()
    );
    if before != cdef.as_bytes() {
        fs::write(&committed, &cdef).unwrap();
    }
}

/// The header as LuaJIT's `ffi.cdef` takes it: no comments, no
/// preprocessor lines (include guard, includes, the version macros, the
/// C++ guard), no blank-line runs.
fn cdef_of(header: &str) -> String {
    let mut code = String::new();
    let mut rest = header;
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("closed comment");
        rest = &rest[start + end + 2..];
    }
    code.push_str(rest);
    let mut out = String::from(
        "/* libcupel's C API for LuaJIT's ffi.cdef: include/cupel.h without comments\n\
         * and preprocessor lines. Generated by build.rs; do not edit. */\n",
    );
    for line in code.lines() {
        let t = line.trim();
        // The C++ guard's lines: `#ifdef`, `extern "C" {`, `}  // extern "C"`.
        if t.is_empty() || t.starts_with('#') || t.contains("extern \"C\"") {
            continue;
        }
        out.push_str(line.trim_end());
        out.push('\n');
        // One blank line after each declaration, for reading.
        if t.ends_with(';') && !line.starts_with(' ') {
            out.push('\n');
        }
    }
    out
}
