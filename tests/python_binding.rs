//! The Python package (bindings/python): installed with one `pip install`
//! into a fresh virtual environment (so a file missing from the package
//! fails here), then its pytest suite run from that environment, outside
//! the source tree's import path.

mod common;

#[path = "../fuzz/src/pipeline_ref.rs"]
mod pipeline_ref;

#[path = "common/cases.rs"]
mod cases;

#[path = "common/cross.rs"]
mod cross;

use std::process::Command;

#[test]
fn pip_installs_the_package_and_pytest_passes() {
    if !common::have_toolchain("python3", "Debian's python3 and python3-venv") {
        return;
    }
    let lib = common::release_lib_dir().join("libcupel.so");
    let root = common::root();
    let venv = common::out_dir("python_binding").join("venv");
    let _ = std::fs::remove_dir_all(&venv);
    common::run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv (Debian: python3-venv)",
    );
    let pip = venv.join("bin/pip");
    common::run(
        Command::new(&pip)
            .args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "pytest",
            ])
            .arg(root.join("bindings/python"))
            .env("CUPEL_LIB_PATH", &lib),
        "pip install bindings/python pytest",
    );
    // From a scratch directory: `import cupel` must find the installed copy.
    let scratch = common::out_dir("python_binding");
    let out = common::run(
        Command::new(venv.join("bin/python"))
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(root.join("bindings/python/tests"))
            .current_dir(&scratch)
            .env_remove("CUPEL_LIB"),
        "pytest",
    );
    print!("{out}");
    assert!(out.contains(" passed") && !out.contains("failed"), "{out}");

    // The demo: the C demo's pipeline on the same data, the same selection.
    let demo = common::run(
        Command::new(venv.join("bin/python"))
            .arg(root.join("bindings/python/demo.py"))
            .arg(root.join("examples/data/rag_candidates.csv"))
            .current_dir(&scratch),
        "the Python demo",
    );
    let c_demo = common::run(
        Command::new("bash").arg(root.join("examples/demo.sh")),
        "examples/demo.sh",
    );
    let placed = |out: &str| -> String {
        out.lines()
            .find(|l| l.starts_with("placed:"))
            .unwrap_or_else(|| panic!("no placed: line in\n{out}"))
            .to_string()
    };
    assert_eq!(placed(&demo), placed(&c_demo));

    // Cross-binding agreement with the C ABI on seeded random pipelines.
    let (text, expected) = cross::cases(300);
    let cases = scratch.join("cross_cases.txt");
    std::fs::write(&cases, text).unwrap();
    let out = common::run(
        Command::new(venv.join("bin/python"))
            .arg(root.join("bindings/python/tests/cross.py"))
            .arg(&cases)
            .current_dir(&scratch),
        "the Python cross driver",
    );
    cross::compare("Python", &out, &expected);
}
