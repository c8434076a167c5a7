//! Cross-binding agreement: the same seeded random pipelines (every scorer,
//! slicer, placer, overflow strategy, deduplication, groups) through the C
//! ABI, C++, Go and C# give the same placed indices and reasons (Python:
//! tests/python_binding.rs, from its installed package).

mod common;

#[path = "../fuzz/src/pipeline_ref.rs"]
mod pipeline_ref;

#[path = "common/cases.rs"]
mod cases;

#[path = "common/cross.rs"]
mod cross;

use std::process::Command;

const CASES: u64 = 300;

fn write_cases(name: &str) -> (std::path::PathBuf, Vec<String>) {
    let (text, expected) = cross::cases(CASES);
    let path = common::out_dir("cross_bindings").join(format!("{name}.txt"));
    std::fs::write(&path, text).unwrap();
    (path, expected)
}

#[test]
fn cpp_agrees_with_c() {
    let (cases, expected) = write_cases("cpp");
    let exe = common::out_dir("cross_bindings").join("cpp_cross");
    common::build_cpp_program(&common::root().join("tests/cpp/cross.cpp"), &exe);
    let out = common::run(Command::new(&exe).arg(&cases), "the C++ cross driver");
    cross::compare("C++", &out, &expected);
}

#[test]
fn go_agrees_with_c() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let (cases, expected) = write_cases("go");
    common::release_lib_dir();
    let out = common::run(
        Command::new("go")
            .args(["run", "./cross"])
            .arg(&cases)
            .current_dir(common::root().join("bindings/go"))
            .env("CGO_ENABLED", "1"),
        "the Go cross driver",
    );
    cross::compare("Go", &out, &expected);
}

#[test]
fn csharp_agrees_with_c() {
    if !common::have_toolchain("mono", "Debian's mono-runtime and mono-mcs") {
        return;
    }
    let (cases, expected) = write_cases("csharp");
    common::release_lib_dir();
    let out = common::run(
        Command::new("bash")
            .arg(common::root().join("bindings/csharp/test.sh"))
            .arg("--cross")
            .arg(&cases),
        "the C# cross driver",
    );
    cross::compare("C#", &out, &expected);
}
