//! The README's quick start compiles, prints what the README shows, and
//! the dynamic and static link lines of docs/install.md link and run.

mod common;

use std::process::Command;

#[test]
fn readme_quickstart_is_the_example_file() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let quick = std::fs::read_to_string(common::root().join("examples/quickstart.c")).unwrap();
    assert!(
        readme.contains(&quick),
        "README's quick start differs from examples/quickstart.c"
    );
}

/// The output block the README shows for the quick start.
fn readme_output() -> String {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    common::code_block_after(&readme, "<!-- output of examples/quickstart.c -->")
}

fn check_output(exe: &std::path::Path) {
    let out = common::run(&mut Command::new(exe), "quickstart");
    assert_eq!(out.trim_end(), readme_output().trim_end());
    assert!(out.contains("Deduplicated"), "{out}");
}

#[test]
fn quickstart_links_dynamically() {
    let exe = common::out_dir("link").join("quickstart");
    let src = common::root().join("examples/quickstart.c");
    common::build_c_program(&[&src], &exe, &[]);
    check_output(&exe);
}

#[test]
fn quickstart_links_statically_with_the_documented_libraries() {
    let doc = std::fs::read_to_string(common::root().join("docs/install.md")).unwrap();
    let libs = "-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc";
    assert!(
        doc.contains(libs),
        "docs/install.md documents other static libraries"
    );
    let exe = common::out_dir("link").join("quickstart-static");
    let mut cmd = common::compiler(false);
    cmd.args(["-std=c99", "-I"])
        .arg(common::root().join("include"))
        .arg(common::root().join("examples/quickstart.c"))
        .arg(common::lib_dir().join("libcupel.a"))
        .args(libs.split(' '))
        .arg("-o")
        .arg(&exe);
    common::run(&mut cmd, "static link");
    check_output(&exe);
    let ldd = Command::new("ldd").arg(&exe).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&ldd.stdout).contains("libcupel"),
        "linked the shared library"
    );
}
