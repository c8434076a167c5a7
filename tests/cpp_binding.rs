//! The C++ binding (bindings/cpp): its test suites (test_cupel.cpp,
//! test_policy.cpp) and its contract runner (C++17, -Werror), the README's
//! examples (select.cpp, its first, "The one-call path"; example.cpp, built
//! here and from the README's own lines; tokens.cpp, its "Counting tokens";
//! shrink.cpp, its "Items that shrink"; session.cpp, its "Sessions";
//! policy.cpp, presets.cpp, sensitivity.cpp, analytics.cpp and trace.cpp,
//! its sections of those names), and the package: `cmake --install` into a
//! fresh prefix, then a fresh CMake project (find_package) and a pkg-config
//! build of the example against it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn build_cpp(src: &Path, exe: &Path) {
    common::build_cpp_against(src, exe, &common::release_lib_dir(), &["-pedantic"]);
}

fn readme() -> String {
    std::fs::read_to_string(common::root().join("bindings/cpp/README.md")).unwrap()
}

/// What the README says the example prints.
fn readme_output() -> String {
    common::code_block_after(&readme(), "\nprints\n")
}

/// The README's example program.
fn readme_example() -> String {
    common::code_block_after(&readme(), "`example.cpp`:")
}

/// Runs one of the README's shell blocks with `sh -e` in `dir`, with
/// `home` as $HOME and cargo on the PATH; returns its standard output.
fn run_readme_block(block: &str, dir: &Path, home: &Path, what: &str) -> String {
    let cargo_dir = Path::new(env!("CARGO")).parent().unwrap().to_path_buf();
    let path = std::env::join_paths(std::iter::once(cargo_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    common::run(
        Command::new("sh")
            .args(["-ec", block])
            .current_dir(dir)
            .env("HOME", home)
            .env("PATH", path)
            .env_remove("PKG_CONFIG_PATH"),
        what,
    )
}

/// A fresh, empty scratch directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = common::out_dir(name);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn cpp_wrapper_tests_pass() {
    let exe = common::out_dir("cpp").join("test_cupel_cpp");
    build_cpp(&common::root().join("tests/cpp/test_cupel.cpp"), &exe);
    let out = common::run(&mut Command::new(&exe), "test_cupel_cpp");
    print!("{out}");
    assert!(out.contains(" passed, 0 failed"), "{out}");
}

/// Policies as data, presets, sensitivity, analytics, tracing and the
/// one-call path (tests/cpp/test_policy.cpp).
#[test]
fn cpp_policy_tests_pass() {
    let exe = common::out_dir("cpp").join("test_policy_cpp");
    build_cpp(&common::root().join("tests/cpp/test_policy.cpp"), &exe);
    let out = common::run(&mut Command::new(&exe), "test_policy_cpp");
    print!("{out}");
    assert!(out.contains(" passed, 0 failed"), "{out}");
}

/// A README section's example: the section `## {heading}` holds the text
/// of bindings/cpp/{name}.cpp after "`{name}.cpp`:", and what it prints
/// after "`{name}.cpp` prints"; the source has each of `needles`, the
/// output each of `lines`; built and run, it prints what the README shows.
fn section_example_runs(heading: &str, name: &str, needles: &[&str], lines: &[&str]) {
    let readme = readme();
    let section = &readme[readme
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("a \"{heading}\" section in bindings/cpp/README.md"))..];
    let example = common::root().join(format!("bindings/cpp/{name}.cpp"));
    let source = std::fs::read_to_string(&example).unwrap();
    assert_eq!(
        common::code_block_after(section, &format!("`{name}.cpp`:")),
        source,
        "bindings/cpp/README.md's {name} example differs from bindings/cpp/{name}.cpp"
    );
    let want = common::code_block_after(section, &format!("`{name}.cpp` prints"));
    for needle in needles {
        assert!(source.contains(needle), "{name}.cpp has no {needle}");
    }
    for line in lines {
        assert!(want.contains(line), "{want}");
    }
    let exe = common::out_dir("cpp").join(name);
    build_cpp(&example, &exe);
    let out = common::run(&mut Command::new(&exe), name);
    assert_eq!(
        out, want,
        "bindings/cpp/README.md does not show what {name}.cpp prints"
    );
}

/// The README's first example is the one-call path: select.cpp keeps the
/// pinned system prompt, drops a tool call together with its result, keeps
/// two parallel calls with both results, and names the empty text.
#[test]
fn cpp_select_example_runs() {
    let readme = readme();
    let first_example = readme.find("```cpp").unwrap();
    assert!(
        readme[..first_example].contains("\n## The one-call path\n")
            && readme[first_example..].starts_with("```cpp\n// The one-call path"),
        "the README's first example is not the one-call path"
    );
    section_example_runs(
        "The one-call path",
        "select",
        &[
            "cupel::select(messages, 60)",
            "cupel::select_indices(",
            ".tool_call_ids = ",
        ],
        &[
            "SystemPrompt: You are a coding assistant. Answer briefly.\n",
            "ToolOutput: Cargo.toml: crate-type",
            "error: CUPEL_ERROR_INVALID_ARGUMENT: messages[1].text is empty",
        ],
    );
    let out = common::code_block_after(&readme, "`select.cpp` prints");
    assert!(
        !out.contains("call_1") && !out.contains("grep the build log"),
        "{out}"
    );
}

#[test]
fn cpp_policy_example_runs() {
    section_example_runs(
        "Policies from JSON",
        "policy",
        &["Pipeline::from_json(", "Budget::from_json(", ".to_json()"],
        &[
            "round trip: same\n",
            "error: CUPEL_ERROR_INVALID_ARGUMENT: json $.scorers[0].weight: must be positive and finite (got -1)\n",
        ],
    );
}

#[test]
fn cpp_presets_example_runs() {
    section_example_runs(
        "Presets",
        "presets",
        &["cupel::preset_names()", "Pipeline::preset("],
        &["presets: Chat CodeReview Rag DocumentQa ToolUse LongRunning Debugging AgentLoop\n"],
    );
}

#[test]
fn cpp_sensitivity_example_runs() {
    section_example_runs(
        "Policy sensitivity",
        "sensitivity",
        &["cupel::policy_sensitivity("],
        &["\"index\":1,", "\"index\":3,"],
    );
}

#[test]
fn cpp_analytics_example_runs() {
    section_example_runs(
        "Analytics",
        "analytics",
        &[
            ".budget_utilization()",
            ".kind_diversity(",
            ".timestamp_coverage(",
            ".analytics(",
        ],
        &["budget utilization: 0.55\n", "kind diversity: 3\n"],
    );
}

#[test]
fn cpp_trace_example_runs() {
    section_example_runs(
        "Tracing",
        "trace",
        &[".set_trace(cupel::TraceLevel::Exclusions", ".clear_trace()"],
        &[
            "cupel.stage.classify: 3 in, 3 out\n",
            "cupel.exclusion: item 0 (Message, 100 tokens), BudgetExceeded\n",
            "cupel.pipeline: max 300 tokens, 2 of 3 items included\n",
            "the callback threw: no\n",
        ],
    );
}

/// Every row of tests/contract/contract.txt that names cpp, through
/// cupel.hpp (tests/cpp/contract.cpp).
#[test]
fn cpp_contract() {
    let exe = common::out_dir("cpp").join("contract_cpp");
    build_cpp(&common::root().join("tests/cpp/contract.cpp"), &exe);
    let out = common::run(
        Command::new(&exe).env("CUPEL_CONTRACT", common::contract::path()),
        "contract_cpp",
    );
    print!("{out}");
    common::contract::check_summary("cpp", &out);
}

#[test]
fn cpp_example_runs() {
    let example = common::root().join("bindings/cpp/example.cpp");
    assert_eq!(
        readme_example(),
        std::fs::read_to_string(&example).unwrap(),
        "bindings/cpp/README.md's example differs from bindings/cpp/example.cpp"
    );
    let want = readme_output();
    assert!(
        want.contains("error: CUPEL_ERROR_INVALID_ARGUMENT: target_tokens 20 > max_tokens 10\n"),
        "{want}"
    );

    let exe = common::out_dir("cpp").join("example");
    build_cpp(&example, &exe);
    let out = common::run(&mut Command::new(&exe), "example");
    assert_eq!(
        out, want,
        "bindings/cpp/README.md does not show what the example prints"
    );

    // The README's lines for a build in the source tree: the binary goes
    // under target/, and prints the same.
    let block = common::code_block_after(&readme(), "Without installing");
    assert!(block.contains("-o target/cpp/example"), "{block}");
    let home = fresh_dir("cpp-home-source");
    let out = run_readme_block(
        &block,
        &common::root(),
        &home,
        "the README's source-tree build",
    );
    assert_eq!(out, want, "the README's source-tree build prints otherwise");
}

/// The README's "Counting tokens" example (bindings/cpp/tokens.cpp, the
/// same text as the README's block) prints what the README shows: a count,
/// a truncation keeping both ends with byte offsets, items from text.
#[test]
fn cpp_tokens_example_runs() {
    let readme = readme();
    let section = &readme[readme
        .find("\n## Counting tokens\n")
        .expect("a \"Counting tokens\" section in bindings/cpp/README.md")..];
    let example = common::root().join("bindings/cpp/tokens.cpp");
    assert_eq!(
        common::code_block_after(section, "`tokens.cpp`:"),
        std::fs::read_to_string(&example).unwrap(),
        "bindings/cpp/README.md's tokens example differs from bindings/cpp/tokens.cpp"
    );
    let want = common::code_block_after(section, "`tokens.cpp` prints");
    // The section shows what the brief asks of it: a count, a cut keeping
    // both ends, items pushed from text.
    let source = std::fs::read_to_string(&example).unwrap();
    for needle in [
        ".count(",
        "cupel::Keep::BothEnds",
        ".push_text(",
        ".push_texts(",
    ] {
        assert!(source.contains(needle), "tokens.cpp has no {needle}");
    }
    assert!(want.starts_with("tokens: 12\n"), "{want}");

    let exe = common::out_dir("cpp").join("tokens");
    build_cpp(&example, &exe);
    let out = common::run(&mut Command::new(&exe), "tokens");
    assert_eq!(
        out, want,
        "bindings/cpp/README.md does not show what tokens.cpp prints"
    );
}

/// The README's "Items that shrink" example (bindings/cpp/shrink.cpp, the
/// same text as the README's block) prints what the README shows: a variant
/// chosen for the huge tool log, the document cut to its head with byte
/// offsets, and the text each chosen item sends.
#[test]
fn cpp_shrink_example_runs() {
    let readme = readme();
    let section = &readme[readme
        .find("\n## Items that shrink\n")
        .expect("an \"Items that shrink\" section in bindings/cpp/README.md")..];
    let example = common::root().join("bindings/cpp/shrink.cpp");
    assert_eq!(
        common::code_block_after(section, "`shrink.cpp`:"),
        std::fs::read_to_string(&example).unwrap(),
        "bindings/cpp/README.md's shrink example differs from bindings/cpp/shrink.cpp"
    );
    let want = common::code_block_after(section, "`shrink.cpp` prints");
    let source = std::fs::read_to_string(&example).unwrap();
    for needle in [
        ".add_variant(",
        ".set_truncatable(",
        ".set_tokenizer(",
        "report.text(",
    ] {
        assert!(source.contains(needle), "shrink.cpp has no {needle}");
    }
    for line in [
        "item 1: Variant, variant 1, 12 of 9000 tokens\n",
        "  sends \"[output cleared: 9,000 tokens]\"\n",
        "tokens used: 1000\n",
    ] {
        assert!(want.contains(line), "{want}");
    }

    let exe = common::out_dir("cpp").join("shrink");
    build_cpp(&example, &exe);
    let out = common::run(&mut Command::new(&exe), "shrink");
    assert_eq!(
        out, want,
        "bindings/cpp/README.md does not show what shrink.cpp prints"
    );
}

/// The README's "Sessions" example (bindings/cpp/session.cpp, the same text
/// as the README's block) prints what the README shows: three turns through
/// one session, first, append and compact, each with its stable prefix and
/// cache breakpoints.
#[test]
fn cpp_session_example_runs() {
    let readme = readme();
    let section = &readme[readme
        .find("\n## Sessions\n")
        .expect("a \"Sessions\" section in bindings/cpp/README.md")..];
    let example = common::root().join("bindings/cpp/session.cpp");
    assert_eq!(
        common::code_block_after(section, "`session.cpp`:"),
        std::fs::read_to_string(&example).unwrap(),
        "bindings/cpp/README.md's session example differs from bindings/cpp/session.cpp"
    );
    let want = common::code_block_after(section, "`session.cpp` prints");
    let source = std::fs::read_to_string(&example).unwrap();
    for needle in [
        "cupel::Session session(",
        ".set_key(",
        ".set_volatile(",
        ".stable_prefix()",
        ".last_action()",
        ".breakpoints()",
    ] {
        assert!(source.contains(needle), "session.cpp has no {needle}");
    }
    for line in [
        "turn 1: first, prompt 1 2 notes; stable prefix 0 items, 0 tokens\n",
        "turn 2: append, prompt 1 2 3 4 notes; stable prefix 2 items, 240 tokens\n",
        "turn 3: compact,",
    ] {
        assert!(want.contains(line), "{want}");
    }

    let exe = common::out_dir("cpp").join("session");
    build_cpp(&example, &exe);
    let out = common::run(&mut Command::new(&exe), "session");
    assert_eq!(
        out, want,
        "bindings/cpp/README.md does not show what session.cpp prints"
    );
}

/// The package: the README's install lines into a fresh $HOME/.local, then
/// the example from a fresh CMake project (shared and static targets) and
/// from the README's pkg-config line, each run checked.
#[test]
fn cpp_package_installs_and_links() {
    if !common::have_toolchain("cmake", "cmake (apt-get install cmake)")
        || !common::have_toolchain("pkg-config", "pkg-config (apt-get install pkg-config)")
    {
        return;
    }
    common::release_lib_dir();
    let want = readme_output();
    let home = fresh_dir("cpp-home");
    let readme = readme();

    let install = common::code_block_after(&readme, "## Install");
    assert!(install.contains("cmake --install"), "{install}");
    run_readme_block(
        &install,
        &common::root(),
        &home,
        "the README's install lines",
    );
    let prefix = home.join(".local");
    let libdir = ["lib", "lib64"]
        .iter()
        .map(|d| prefix.join(d))
        .find(|d| d.join("pkgconfig/cupel.pc").exists())
        .unwrap_or_else(|| panic!("no lib/pkgconfig/cupel.pc under {}", prefix.display()));
    for f in [
        prefix.join("include/cupel.h"),
        prefix.join("include/cupel.hpp"),
        libdir.join("libcupel.so"),
        libdir.join("libcupel.a"),
        libdir.join("cmake/cupel/cupelConfig.cmake"),
        libdir.join("cmake/cupel/cupelConfigVersion.cmake"),
    ] {
        assert!(f.exists(), "{} was not installed", f.display());
    }
    // The installed headers are the tree's.
    for (installed, source) in [
        ("cupel.h", "include/cupel.h"),
        ("cupel.hpp", "bindings/cpp/cupel.hpp"),
    ] {
        assert_eq!(
            std::fs::read(prefix.join("include").join(installed)).unwrap(),
            std::fs::read(common::root().join(source)).unwrap(),
            "{installed}"
        );
    }

    // A fresh CMake project: find_package + cupel::cupel (and the static target).
    let app = fresh_dir("cpp-app-cmake");
    std::fs::write(app.join("example.cpp"), readme_example()).unwrap();
    let snippet = common::code_block_after(&readme, "```cmake");
    assert!(snippet.contains("find_package(cupel"), "{snippet}");
    std::fs::write(
        app.join("CMakeLists.txt"),
        format!(
            "cmake_minimum_required(VERSION 3.14)\nproject(app CXX)\nadd_executable(app example.cpp)\n\
             {snippet}add_executable(app_static example.cpp)\n\
             target_link_libraries(app_static PRIVATE cupel::cupel_static)\n"
        ),
    )
    .unwrap();
    let build = app.join("build");
    common::run(
        Command::new("cmake")
            .arg("-S")
            .arg(&app)
            .arg("-B")
            .arg(&build)
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display())),
        "configuring the consumer project",
    );
    common::run(
        Command::new("cmake").arg("--build").arg(&build),
        "building the consumer project",
    );
    // cargo test puts target/release on LD_LIBRARY_PATH, which the loader
    // would prefer: run the installed programs without it.
    for exe in ["app", "app_static"] {
        let out = common::run(
            Command::new(build.join(exe)).env_remove("LD_LIBRARY_PATH"),
            exe,
        );
        assert_eq!(out, want, "the installed package's {exe} prints otherwise");
    }
    // The shared one really links the installed library.
    let ldd = common::run(
        Command::new("ldd")
            .arg(build.join("app"))
            .env_remove("LD_LIBRARY_PATH"),
        "ldd app",
    );
    let installed_so = libdir.join("libcupel.so");
    assert!(
        ldd.contains(&installed_so.display().to_string()),
        "app does not load {}:\n{ldd}",
        installed_so.display()
    );

    // The version file: this major.minor matches, the next minor does not
    // (before 1.0 a minor release may break the ABI: docs/abi.md).
    let picky = fresh_dir("cpp-app-version");
    std::fs::write(
        picky.join("CMakeLists.txt"),
        format!(
            "cmake_minimum_required(VERSION 3.14)\nproject(picky NONE)\nfind_package(cupel {} REQUIRED)\n",
            next_minor()
        ),
    )
    .unwrap();
    let refused = Command::new("cmake")
        .arg("-S")
        .arg(&picky)
        .arg("-B")
        .arg(picky.join("build"))
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .output()
        .unwrap();
    assert!(
        !refused.status.success(),
        "find_package(cupel {}) accepted version {}",
        next_minor(),
        env!("CARGO_PKG_VERSION")
    );

    // pkg-config: the README's line in a fresh directory.
    let pc = fresh_dir("cpp-app-pkgconfig");
    std::fs::write(pc.join("example.cpp"), readme_example()).unwrap();
    let line = common::code_block_after(&readme, "or with pkg-config:");
    assert!(line.contains("pkg-config --cflags --libs cupel"), "{line}");
    run_readme_block(&line, &pc, &home, "the README's pkg-config build");
    let out = common::run(
        Command::new(pc.join("example")).env_remove("LD_LIBRARY_PATH"),
        "pkg-config example",
    );
    let ldd = common::run(
        Command::new("ldd")
            .arg(pc.join("example"))
            .env_remove("LD_LIBRARY_PATH"),
        "ldd example",
    );
    assert!(
        ldd.contains(&installed_so.display().to_string()),
        "the pkg-config example does not load {}:\n{ldd}",
        installed_so.display()
    );
    assert_eq!(out, want, "the pkg-config build prints otherwise");
}

/// "MAJOR.MINOR+1" of this version: a version the installed package must refuse.
fn next_minor() -> String {
    let mut parts = env!("CARGO_PKG_VERSION").split('.');
    let major = parts.next().unwrap();
    let minor: u32 = parts.next().unwrap().parse().unwrap();
    format!("{major}.{}", minor + 1)
}
