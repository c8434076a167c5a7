//! The ABI check (tests/abi/check.sh, docs/abi.md): the library must stay
//! ABI-compatible with the committed baseline, and the check must fail on
//! the incompatible changes it exists to catch. Each planted change is made
//! in a copy of the baseline, so "the baseline lacks X" plays "the library
//! gained X" and "the baseline has Y" plays "the library lost Y", against
//! the library as built.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn check(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(common::root().join("tests/abi/check.sh"))
        .args(args)
        .output()
        .expect("bash tests/abi/check.sh")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn baseline() -> String {
    std::fs::read_to_string(common::root().join("tests/abi/cupel.abi")).unwrap()
}

/// The `<tag name='name' ...> ... </tag>` element of `abi` (with its line).
fn element(abi: &str, tag: &str, name: &str) -> (usize, usize) {
    let open = format!("<{tag} name='{name}'");
    let start = abi
        .find(&open)
        .unwrap_or_else(|| panic!("no {open} in the baseline"));
    let start = abi[..start].rfind('\n').map_or(0, |i| i + 1);
    let close = format!("</{tag}>");
    let end = start + abi[start..].find(&close).unwrap() + close.len() + 1;
    (start, end)
}

/// Runs the check of the built library against `abi`, written to `name`.
fn against(dir: &Path, name: &str, abi: &str, lib: &Path) -> Output {
    let path = dir.join(name);
    std::fs::write(&path, abi).unwrap();
    check(&[
        "--lib",
        lib.to_str().unwrap(),
        "--baseline",
        path.to_str().unwrap(),
    ])
}

#[test]
fn the_library_matches_its_abi_baseline_and_planted_changes_fail() {
    if !common::have_toolchain("abidiff", "Debian's abigail-tools") {
        return;
    }
    // 1. The tree as it is: compatible (this also builds target/abi).
    let out = check(&[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("ABI check: compatible"),
        "{}",
        text(&out)
    );

    let lib: PathBuf = common::root().join("target/abi/libcupel.so");
    let dir = common::out_dir("abi");
    let base = baseline();

    // 2. The same baseline, unchanged: compatible.
    let out = against(&dir, "same.abi", &base, &lib);
    assert!(out.status.success(), "{}", text(&out));

    // 3. A struct grew: the baseline's cupel_decision without its last field
    //    (what happened to cupel_decision once, without a version bump).
    let (s, e) = element(&base, "class-decl", "cupel_decision");
    let decl = &base[s..e];
    let last = decl
        .rfind("<data-member ")
        .expect("cupel_decision has fields");
    let last = decl[..last].rfind('\n').unwrap() + 1;
    let last_end = last + decl[last..].find("</data-member>").unwrap() + "</data-member>\n".len();
    let size = decl
        .split("size-in-bits='")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .and_then(|n| n.parse::<u32>().ok())
        .expect("cupel_decision's size");
    let shrunk = format!("{}{}", &decl[..last], &decl[last_end..]).replacen(
        &format!("size-in-bits='{size}'"),
        &format!("size-in-bits='{}'", size - 64),
        1,
    );
    let planted = format!("{}{}{}", &base[..s], shrunk, &base[e..]);
    let out = against(&dir, "struct_grew.abi", &planted, &lib);
    assert!(
        !out.status.success(),
        "a grown struct passed:\n{}",
        text(&out)
    );
    let t = text(&out);
    assert!(
        t.contains("cupel_decision") && t.contains("type size changed"),
        "{t}"
    );
    assert!(t.contains("ABI check FAILED"), "{t}");

    // 4. An enum value changed.
    let planted = base.replace(
        "<enumerator name='CUPEL_ERROR_OVERFLOW' value='8'/>",
        "<enumerator name='CUPEL_ERROR_OVERFLOW' value='9'/>",
    );
    assert_ne!(planted, base, "the baseline has CUPEL_ERROR_OVERFLOW = 8");
    let out = against(&dir, "enum_changed.abi", &planted, &lib);
    assert!(
        !out.status.success(),
        "a changed enum value passed:\n{}",
        text(&out)
    );
    assert!(
        text(&out).contains("CUPEL_ERROR_OVERFLOW"),
        "{}",
        text(&out)
    );

    // 5. A function removed: the baseline has one the library lacks.
    let sym = base
        .lines()
        .find(|l| l.contains("<elf-symbol name='cupel_items_len'"))
        .expect("the baseline exports cupel_items_len")
        .to_string();
    let (s, e) = element(&base, "function-decl", "cupel_items_len");
    let decl = base[s..e].replace("cupel_items_len", "cupel_items_length");
    let mut planted = base.clone();
    planted.insert_str(e, &decl);
    let planted = planted.replacen(
        &sym,
        &format!(
            "{sym}\n{}",
            sym.replace("cupel_items_len", "cupel_items_length")
        ),
        1,
    );
    let out = against(&dir, "function_removed.abi", &planted, &lib);
    assert!(
        !out.status.success(),
        "a removed function passed:\n{}",
        text(&out)
    );
    assert!(text(&out).contains("cupel_items_length"), "{}", text(&out));

    // 6. Additions pass: a baseline without cupel_reason_str (the library
    //    added it), and one without an enum value (the library added it).
    let sym = base
        .lines()
        .find(|l| l.contains("<elf-symbol name='cupel_reason_str'"))
        .expect("the baseline exports cupel_reason_str")
        .to_string();
    let (s, e) = element(&base, "function-decl", "cupel_reason_str");
    let planted = format!("{}{}", &base[..s], &base[e..]).replacen(&format!("{sym}\n"), "", 1);
    let out = against(&dir, "function_added.abi", &planted, &lib);
    assert!(
        out.status.success(),
        "an added function failed:\n{}",
        text(&out)
    );
    let planted = base.replace("<enumerator name='CUPEL_ERROR_OVERFLOW' value='8'/>", "");
    let out = against(&dir, "enum_added.abi", &planted, &lib);
    assert!(
        out.status.success(),
        "an added enum value failed:\n{}",
        text(&out)
    );

    // 7. The opaque handles' insides are the library's own: a change there passes.
    let (s, e) = element(&base, "class-decl", "cupel_items");
    let planted = format!(
        "{}{}{}",
        &base[..s],
        base[s..e].replacen("size-in-bits='", "size-in-bits='64", 1),
        &base[e..]
    );
    let out = against(&dir, "opaque_changed.abi", &planted, &lib);
    assert!(
        out.status.success(),
        "an opaque handle's change failed:\n{}",
        text(&out)
    );
}

/// The baseline was written by `check.sh --update` (no locations, hashed
/// type ids), so that it changes only when the ABI does.
#[test]
fn the_baseline_has_no_source_locations() {
    let base = baseline();
    assert!(base.contains("<abi-corpus"), "not an abixml file");
    assert!(
        !base.contains("filepath="),
        "write it with check.sh --update"
    );
    assert!(base.matches("<elf-symbol name='cupel_").count() > 100);
}
