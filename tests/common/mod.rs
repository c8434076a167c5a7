//! Helpers for tests that build C/C++ programs against the library.
#![allow(dead_code)]

pub mod contract;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The directory holding this profile's libcupel.so / libcupel.a, built
/// first (`cargo build --lib` for this profile: a no-op when up to date),
/// so that the tests need no earlier `cargo build` and never link a stale
/// library.
pub fn lib_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // target/[<triple>/]<profile>/deps/<test-binary>
            let exe = std::env::current_exe().unwrap();
            let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
            let profile = profile_dir
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .to_owned();
            let mut target_dir = profile_dir.parent().unwrap().to_path_buf();
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args(["build", "--lib", "--quiet"]).current_dir(root());
            let triple = env!("CUPEL_BUILD_TARGET");
            if target_dir.file_name().is_some_and(|n| n == triple) {
                cmd.args(["--target", triple]);
                target_dir.pop();
            }
            match profile.as_str() {
                "debug" => {}
                "release" => {
                    cmd.arg("--release");
                }
                other => {
                    cmd.args(["--profile", other]);
                }
            }
            cmd.arg("--target-dir").arg(&target_dir);
            run(&mut cmd, "building the library for the C tests");
            profile_dir
        })
        .clone()
}

/// `target/release`, with the release library built first: the Go and C#
/// bindings link it there, as their READMEs say.
pub fn release_lib_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args(["build", "--lib", "--release", "--quiet"])
                .current_dir(root());
            run(&mut cmd, "building the release library for the bindings");
            root().join("target/release")
        })
        .clone()
}

/// A scratch directory for build outputs.
pub fn out_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The C (or C++) compiler as the `cc` crate finds it for this target.
pub fn compiler(cpp: bool) -> Command {
    let target = env!("CUPEL_BUILD_TARGET");
    cc::Build::new()
        .cpp(cpp)
        .target(target)
        .host(target)
        .opt_level(0)
        .debug(true)
        .cargo_metadata(false)
        .warnings(false)
        .get_compiler()
        .to_command()
}

/// Runs a command, failing the test with its output if it fails.
pub fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    stdout
}

/// Compiles C sources into an executable linked against the shared library.
pub fn build_c_program(sources: &[&Path], exe: &Path, extra: &[&str]) {
    let lib = lib_dir();
    assert!(
        lib.join("libcupel.so").exists() || lib.join("libcupel.dylib").exists(),
        "libcupel shared library missing in {}",
        lib.display()
    );
    let mut cmd = compiler(false);
    cmd.args(["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"])
        .arg("-I")
        .arg(root().join("include"))
        .args(sources)
        .arg("-o")
        .arg(exe)
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lcupel", "-lm"])
        .args(extra);
    // The program links the shared library dynamically, so it only needs
    // rebuilding when its sources, the headers or the command change: a
    // mutation-testing run rebuilds the library hundreds of times and
    // would otherwise recompile every C suite each time.
    let stamp = exe.with_extension("cmd");
    let command = format!("{cmd:?}");
    if up_to_date(exe, &stamp, &command, sources) {
        return;
    }
    run(&mut cmd, &format!("compiling {}", exe.display()));
    std::fs::write(&stamp, command).unwrap();
}

/// Whether `exe` was built by `command` (recorded in `stamp`) after the last
/// change to `sources`, to the public header and to the C tests' own headers.
fn up_to_date(exe: &Path, stamp: &Path, command: &str, sources: &[&Path]) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(built) = modified(exe) else {
        return false;
    };
    if std::fs::read_to_string(stamp).ok().as_deref() != Some(command) {
        return false;
    }
    let mut inputs: Vec<PathBuf> = sources.iter().map(|p| p.to_path_buf()).collect();
    for dir in [root().join("include"), root().join("tests/c")] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.path().extension().is_some_and(|e| e == "h") {
                inputs.push(entry.path());
            }
        }
    }
    inputs
        .iter()
        .all(|p| modified(p).is_some_and(|m| m <= built))
}

/// Compiles a C++17 program against the release library and the C++
/// binding (bindings/cpp), warnings as errors.
#[allow(dead_code)]
pub fn build_cpp_program(source: &Path, exe: &Path) {
    build_cpp_against(source, exe, &release_lib_dir(), &["-O1"]);
}

/// Compiles the C++17 program `source` (with the C++ binding's header) to
/// `exe`, linked dynamically against the `libcupel` in `lib`, with the
/// warning flags every C++ build here uses plus `extra`.
#[allow(dead_code)]
pub fn build_cpp_against(source: &Path, exe: &Path, lib: &Path, extra: &[&str]) {
    let mut cc = compiler(true);
    cc.args(["-std=c++17", "-Wall", "-Wextra", "-Werror"])
        .args(extra)
        .arg("-I")
        .arg(root().join("include"))
        .arg("-I")
        .arg(root().join("bindings/cpp"))
        .arg(source)
        .arg("-o")
        .arg(exe)
        .arg("-L")
        .arg(lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lcupel");
    run(&mut cc, &format!("compiling {}", source.display()));
}

/// The one seeded generator of every test.
#[allow(unused_imports)]
pub use cupel::testing::Rng;

/// Whether the binding toolchain `program` can run. Missing, it fails the
/// test when `CI=true`; on a developer machine the test is skipped, loudly.
#[allow(dead_code)]
pub fn have_toolchain(program: &str, install_hint: &str) -> bool {
    let found = std::process::Command::new(program)
        .arg("--version")
        .output()
        .or_else(|_| std::process::Command::new(program).arg("version").output())
        .is_ok();
    if !found {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{program} is not installed, and CI=true: install {install_hint}");
        }
        eprintln!(
            "\n*** SKIPPED: {program} not found; install {install_hint} to run this binding test ***\n"
        );
    }
    found
}

/// The first fenced code block after `marker` in a Markdown file.
#[allow(dead_code)]
pub fn code_block_after(markdown: &str, marker: &str) -> String {
    let rest = &markdown[markdown
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?}"))..];
    let start = rest.find("```").expect("a code block");
    let body = &rest[start..];
    let body = &body[body.find('\n').expect("fence line") + 1..];
    body[..body.find("```").expect("closing fence")].to_string()
}
