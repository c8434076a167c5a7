//! The Python package (bindings/python): its wheel is built once from a
//! copy of the sources (so the checkout gets no build artefacts), its tag
//! checked (py3-none-<platform>: one wheel for every Python >= 3.9, since
//! the package has no extension module), and THE WHEEL FILE installed into
//! a fresh CPython venv and a fresh PyPy venv (Debian's PyPy is Python 3.9:
//! the floor), with the wheel's `otel` extra (opentelemetry-api) and
//! opentelemetry-sdk from PyPI. In each, from a scratch directory outside
//! the source tree: the README's examples, "In one call" (the first),
//! "Example", "Counting tokens", "Items that shrink", "Sessions", "Policies
//! from JSON and presets", "Policy sensitivity", "Report analytics",
//! "Tracing" and "OpenTelemetry" (each one's output must be the output
//! block that follows it), the pytest suite (CUPEL_TEST_OTEL=1: the
//! OpenTelemetry tests fail rather than skip without the SDK), the binding
//! contract runner, the demo (the C demo's selection, its data found
//! relative to the script) and the cross-binding driver.

mod common;

#[path = "../fuzz/src/pipeline_ref.rs"]
mod pipeline_ref;

#[path = "common/cases.rs"]
mod cases;

#[path = "common/cross.rs"]
mod cross;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Copies the package's sources, leaving out what a build leaves behind.
fn copy_sources(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let skip = [
            "build",
            "dist",
            "__pycache__",
            ".pytest_cache",
            "libcupel.so",
        ];
        if skip.contains(&name.as_str()) || name.ends_with(".egg-info") || name.ends_with(".whl") {
            continue;
        }
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            copy_sources(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

/// The wheel file, built once per test run with `pip wheel` (in a venv of
/// python3) from a copy of bindings/python, bundling the release library.
fn wheel() -> PathBuf {
    static WHEEL: OnceLock<PathBuf> = OnceLock::new();
    WHEEL
        .get_or_init(|| {
            let lib = common::release_lib_dir().join("libcupel.so");
            let work = common::out_dir("python_binding").join("wheel");
            let _ = std::fs::remove_dir_all(&work);
            let src = work.join("libcupel");
            copy_sources(&common::root().join("bindings/python"), &src);
            let dist = work.join("dist");
            // pip from a venv: Debian's python3 has none without python3-pip.
            let env = work.join("build-venv");
            common::run(
                Command::new("python3").args(["-m", "venv"]).arg(&env),
                "python3 -m venv (Debian: python3-venv)",
            );
            common::run(
                Command::new(env.join("bin/python"))
                    .args(["-m", "pip", "wheel", "--no-deps", "--quiet", "-w"])
                    .arg(&dist)
                    .arg(&src)
                    .env("CUPEL_LIB_PATH", &lib),
                "python3 -m pip wheel bindings/python (a copy)",
            );
            let wheels: Vec<PathBuf> = std::fs::read_dir(&dist)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "whl"))
                .collect();
            assert_eq!(
                wheels.len(),
                1,
                "one wheel in {}: {wheels:?}",
                dist.display()
            );
            wheels[0].clone()
        })
        .clone()
}

#[test]
fn the_wheel_is_one_py3_none_platform_wheel_with_the_library() {
    if !common::have_toolchain("python3", "Debian's python3 and python3-venv") {
        return;
    }
    let wheel = wheel();
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    // name-version-python-abi-platform.whl
    let parts: Vec<&str> = name.trim_end_matches(".whl").split('-').collect();
    assert_eq!(parts.len(), 5, "{name}");
    assert_eq!(
        &parts[..4],
        ["libcupel", "0.2.0", "py3", "none"],
        "not a py3-none wheel: {name}"
    );
    assert!(
        parts[4].starts_with("linux_") || parts[4].starts_with("manylinux"),
        "{name}"
    );
    // Its contents: the package at the root (platlib), the library inside it.
    let listing = common::run(
        Command::new("python3")
            .args([
                "-c",
                "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
                 print('\\n'.join(z.namelist())); \
                 print(z.read('libcupel-0.2.0.dist-info/WHEEL').decode())",
            ])
            .arg(&wheel),
        "listing the wheel",
    );
    for file in [
        "cupel/__init__.py",
        "cupel/_native.py",
        "cupel/libcupel.so",
        "cupel/py.typed",
        "Root-Is-Purelib: false",
        &format!("Tag: py3-none-{}", parts[4]),
    ] {
        assert!(
            listing.lines().any(|l| l.trim() == file),
            "{file} missing in {name}:\n{listing}"
        );
    }
    assert!(
        !listing.contains("tests/") && !listing.contains("demo.py"),
        "{listing}"
    );
}

/// The C demo's output, made once per test run: the CPython and PyPy tests
/// run in parallel, and two examples/demo.sh at once would compile its
/// executable while the other runs it ("Text file busy").
fn c_demo() -> String {
    static OUT: OnceLock<String> = OnceLock::new();
    OUT.get_or_init(|| {
        common::run(
            Command::new("bash").arg(common::root().join("examples/demo.sh")),
            "examples/demo.sh",
        )
    })
    .clone()
}

/// Installs the wheel file into a fresh venv of `python` and runs
/// everything from a scratch directory there.
fn from_the_wheel(python: &str, label: &str) {
    let wheel = wheel();
    let root = common::root();
    let work = common::out_dir("python_binding").join(label);
    let _ = std::fs::remove_dir_all(&work);
    let venv = work.join("venv");
    common::run(
        Command::new(python).args(["-m", "venv"]).arg(&venv),
        &format!("{python} -m venv"),
    );
    let py = venv.join("bin/python");
    let version = common::run(
        Command::new(&py).args([
            "-c",
            "import sys, platform; print(platform.python_implementation(), *sys.version_info[:2])",
        ]),
        "python version",
    );
    println!("{label}: {}", version.trim());
    // The wheel with its `otel` extra (which must bring opentelemetry-api),
    // the SDK the OpenTelemetry tests and example export through, pytest.
    let with_otel = format!("{}[otel]", wheel.display());
    common::run(
        Command::new(&py)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(&with_otel)
            .args(["opentelemetry-sdk", "pytest"]),
        &format!("pip install {with_otel} opentelemetry-sdk pytest"),
    );
    let otel = common::run(
        Command::new(&py).args([
            "-c",
            "import importlib.metadata as m; print(m.version('opentelemetry-api'), m.version('opentelemetry-sdk'))",
        ]),
        "the OpenTelemetry API and SDK installed",
    );
    println!("{label}: opentelemetry-api and -sdk {}", otel.trim());
    let scratch = work.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let python_cmd = || {
        let mut cmd = Command::new(&py);
        cmd.current_dir(&scratch)
            .env_remove("CUPEL_LIB")
            .env_remove("PYTHONPATH")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        cmd
    };

    // The README's examples, run from the scratch directory: each one's
    // output is the output block after it in its section.
    let readme = std::fs::read_to_string(root.join("bindings/python/README.md")).unwrap();
    let first_example = readme
        .find("```python")
        .expect("a Python example in the README");
    assert!(
        readme[..first_example].contains("## In one call"),
        "the README's first example is not the one-call path"
    );
    for (heading, file) in [
        ("## In one call", "one_call.py"),
        ("## Example", "example.py"),
        ("## Counting tokens", "counting.py"),
        ("## Items that shrink", "shrink.py"),
        ("## Sessions", "session.py"),
        ("## Policies from JSON and presets", "policies.py"),
        ("## Policy sensitivity", "sensitivity.py"),
        ("## Report analytics", "analytics.py"),
        ("## Tracing", "tracing.py"),
        ("## OpenTelemetry", "otel.py"),
    ] {
        // The section: from its heading to the next one.
        let start = readme
            .find(heading)
            .unwrap_or_else(|| panic!("no {heading:?} in the README"));
        let rest = &readme[start + heading.len()..];
        let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
        let example = common::code_block_after(section, "```python");
        let expected = common::code_block_after(section, "Output (checked by");
        std::fs::write(scratch.join(file), &example).unwrap();
        let out = common::run(
            python_cmd().arg(file),
            &format!("the README's {heading:?} example under {label}"),
        );
        assert_eq!(
            out, expected,
            "{label}: the README's {heading:?} example's output differs from its output block"
        );
    }

    // The pytest suite, importing the installed package.
    let out = common::run(
        python_cmd()
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(root.join("bindings/python/tests"))
            .env("CUPEL_TEST_INSTALLED", "1")
            .env("CUPEL_TEST_OTEL", "1"),
        &format!("pytest under {label}"),
    );
    print!("{out}");
    assert!(
        out.contains(" passed") && !out.contains("failed") && !out.contains("skipped"),
        "{out}"
    );

    // The binding contract table.
    let out = common::run(
        python_cmd()
            .arg(root.join("bindings/python/tests/contract.py"))
            .env("CUPEL_CONTRACT", common::contract::path()),
        &format!("the contract runner under {label}"),
    );
    print!("{out}");
    common::contract::check_summary("py", &out);

    // The demo, without arguments from another directory: it finds the
    // repository's data relative to itself, and selects as the C demo.
    let demo = common::run(
        python_cmd().arg(root.join("bindings/python/demo.py")),
        &format!("the Python demo under {label}"),
    );
    let c_demo = c_demo();
    let placed = |out: &str| -> String {
        out.lines()
            .find(|l| l.starts_with("placed:"))
            .unwrap_or_else(|| panic!("no placed: line in\n{out}"))
            .to_string()
    };
    assert_eq!(placed(&demo), placed(&c_demo));
    let missing = python_cmd()
        .arg(root.join("bindings/python/demo.py"))
        .arg("no-such.csv")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no data file at no-such.csv") && err.contains("rag_candidates.csv"),
        "{err}"
    );

    // Cross-binding agreement with the C ABI on seeded random pipelines.
    let (text, expected) = cross::cases(300);
    let cases = scratch.join("cross_cases.txt");
    std::fs::write(&cases, text).unwrap();
    let out = common::run(
        python_cmd()
            .arg(root.join("bindings/python/tests/cross.py"))
            .arg(&cases),
        &format!("the Python cross driver under {label}"),
    );
    cross::compare("Python", &out, &expected);
}

#[test]
fn cpython_runs_everything_from_the_installed_wheel() {
    if !common::have_toolchain("python3", "Debian's python3 and python3-venv") {
        return;
    }
    from_the_wheel("python3", "cpython");
}

#[test]
fn pypy_runs_everything_from_the_installed_wheel() {
    if !common::have_toolchain("python3", "Debian's python3 and python3-venv")
        || !common::have_toolchain("pypy3", "Debian's pypy3")
    {
        return;
    }
    from_the_wheel("pypy3", "pypy");
}
