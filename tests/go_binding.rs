//! The Go binding (bindings/go): go vet, the race-detector test suite, the
//! contract table (tests/contract/contract.txt), the README's examples
//! (the first one, the one-call path; "Slicing by hand", "Counting
//! tokens", "Items that shrink", "Sessions", "Policies from JSON",
//! "Presets", "Policy sensitivity", "Analytics" and "Tracing") run as
//! printed, and the module used from a fresh consumer module.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The binding's module path, as bindings/go/go.mod and the README say.
const MODULE: &str = "github.com/libcupel/libcupel/bindings/go";

fn go(args: &[&str]) -> String {
    common::release_lib_dir();
    let dir = common::root().join("bindings/go");
    let mut cmd = Command::new("go");
    cmd.args(args).current_dir(&dir).env("CGO_ENABLED", "1");
    common::run(&mut cmd, &format!("go {}", args.join(" ")))
}

fn readme() -> String {
    std::fs::read_to_string(common::root().join("bindings/go/README.md")).unwrap()
}

#[test]
fn go_vet_and_race_tests_pass() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    go(&["vet", "./..."]);
    let out = go(&["test", "-race", "-count=1", "-v", "./..."]);
    print!("{out}");
    for test in [
        "TestConcurrentSlicing",
        "TestForcedGC",
        "TestNilHandlesAreErrors",
        "TestGetReadsEveryAttributeBack",
        "TestGetOutOfRange",
        "TestReasonNames",
        "TestEmptyKindIsAnError",
        "TestClosedAndNilArguments",
        "TestPushItemsIsAllOrNothing",
        "TestContract",
        "TestTokenizerCounts",
        "TestTokenizerCountMany",
        "TestTokenizerTruncate",
        "TestTokenizerFromTiktoken",
        "TestTokenizerNames",
        "TestClosedTokenizer",
        "TestPushText",
        "TestPushTexts",
        "TestTokenizerConcurrent",
        "TestTokenizerFinalizer",
        "TestShrinkScenario",
        "TestShrinkTextOfCuts",
        "TestShrinkReadBack",
        "TestShrinkErrors",
        "TestItemsTruncate",
        "TestSessionTurns",
        "TestSessionVolatileFirstRun",
        "TestSessionCompacts",
        "TestSessionDuplicateKeysAndFailedRuns",
        "TestSessionSlack",
        "TestSessionOutlivesItsPipeline",
        "TestSessionReport",
        "TestSessionItemIdentity",
        "TestSessionClosedAndNil",
        "TestSessionNames",
        "TestSessionFinalizer",
        // Policies as data, presets, sensitivity, analytics, tracing and
        // the one-call path (issue 29).
        "TestPolicyJSONRoundTrip",
        "TestPolicyJSONErrors",
        "TestBudgetJSON",
        "TestPresets",
        "TestAnalytics",
        "TestSensitivity",
        "TestSensitivityLargeReport",
        "TestTraceLevels",
        "TestTraceEventFields",
        "TestTraceOffAndErrors",
        "TestTracePanicIsAnError",
        "TestTraceConcurrentRuns",
        "TestTraceSessionKeepsCallback",
        "TestTraceInSensitivityAndSelect",
        "TestSelectAgainstLongHand",
        "TestSelectGroupsTransitively",
        "TestSelectPolicyJSONAndAttributes",
        "TestSelectTimestamps",
        "TestSelectErrors",
        "ExampleSelect",
        "ExamplePipeline_SetTrace",
    ] {
        assert!(
            out.contains(&format!("--- PASS: {test} ")),
            "{test}:\n{out}"
        );
    }
    assert!(!out.contains("--- FAIL"), "{out}");
}

/// The contract table through the binding's public API: every row that
/// names go ran, none failed.
#[test]
fn go_contract() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    common::release_lib_dir();
    let out = common::run(
        Command::new("go")
            .args(["test", "-count=1", "-run", "^TestContract$", "-v", "."])
            .current_dir(common::root().join("bindings/go"))
            .env("CGO_ENABLED", "1")
            .env("CUPEL_CONTRACT", common::contract::path()),
        "the Go contract runner",
    );
    print!("{out}");
    common::contract::check_summary("go", &out);
}

/// The README's first example, the one-call path: bindings/go/example/main.go,
/// printing what the README shows (the pinned system prompt, the parallel
/// calls with both results, the last turn; then an error naming the
/// message's field).
#[test]
fn go_readme_example_runs_as_printed() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let root = common::root();
    let readme = readme();
    let source = std::fs::read_to_string(root.join("bindings/go/example/main.go")).unwrap();
    assert!(
        readme.find("## Example") < readme.find("```go"),
        "the one-call path is the README's first Go example"
    );
    assert_eq!(
        common::code_block_after(&readme, "## Example"),
        source,
        "the README's example is not bindings/go/example/main.go"
    );
    assert!(source.contains("cupel.Select("), "{source}");
    let out = go(&["run", "./example"]);
    assert_eq!(
        common::code_block_after(&readme, "It prints:"),
        out,
        "the README does not show what the example prints"
    );
    assert!(out.starts_with("You are a careful assistant."), "{out}");
    assert!(
        out.contains(
            "assistant: calling the clock and the weather tool\ntool: Rome 24C, sunny\ntool: 14:05"
        ),
        "{out}"
    );
    assert!(
        out.ends_with("true CUPEL_ERROR_INVALID_ARGUMENT: messages[3].Text is empty; an item's content must be non-empty\n"),
        "{out}"
    );
}

/// A README section's example: the section's first code block is
/// bindings/go/<dir>/main.go, and `go run ./<dir>` prints the block after
/// the section's "prints:". Returns the output.
fn section_example(heading: &str, dir: &str) -> String {
    let root = common::root();
    let readme = readme();
    let section = &readme[readme
        .find(heading)
        .unwrap_or_else(|| panic!("the README has a {heading:?} section"))..];
    let source =
        std::fs::read_to_string(root.join("bindings/go").join(dir).join("main.go")).unwrap();
    assert_eq!(
        common::code_block_after(section, heading),
        source,
        "the section {heading:?}'s example is not bindings/go/{dir}/main.go"
    );
    let out = go(&["run", &format!("./{dir}")]);
    assert_eq!(
        common::code_block_after(section, "prints:"),
        out,
        "the README does not show what {dir} prints"
    );
    out
}

/// "Slicing by hand": the long-hand slicers (the README's first example
/// before the one-call path).
#[test]
fn go_readme_slicing_example_runs_as_printed() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let out = section_example("## Slicing by hand", "example/slicing");
    assert!(
        out.starts_with("knapsack chose [3 2 1 0] using 950 tokens\n"),
        "{out}"
    );
}

/// "Policies from JSON": a settings file's policy and budget read, used by
/// the one-call path, written back; a broken rule names its JSON path.
#[test]
fn go_readme_policy_example_runs_as_printed() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let out = section_example("## Policies from JSON", "example/policy");
    assert!(out.contains("\"name\":\"support-bot\""), "{out}");
    assert!(
        out.ends_with("json $.scorers[0].weight: must be positive and finite (got -0.5)\n"),
        "{out}"
    );
}

/// "Presets": the table of docs/policies.md, read from each preset's
/// document.
#[test]
fn go_readme_presets_example_runs_as_printed() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let out = section_example("## Presets", "example/presets");
    assert!(out.starts_with("Chat        recency 3, kind 1 "), "{out}");
    assert!(
        out.contains("DocumentQa  kind 2, reflexive 2, priority 1   knapsack uShaped\n"),
        "{out}"
    );
    assert!(
        out.contains("AgentLoop   recency 3, kind 2, reflexive 1 "),
        "{out}"
    );
}

/// "Policy sensitivity": two presets compared; the two items with the same
/// content are two diffs.
#[test]
fn go_readme_sensitivity_example_runs_as_printed() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let out = section_example("## Policy sensitivity", "example/sensitivity");
    assert!(out.contains("item 1 \"see above\""), "{out}");
    assert!(out.contains("item 3 \"see above\""), "{out}");
}

/// "Analytics": the figures of a run with count quotas.
#[test]
fn go_readme_analytics_example_runs_as_printed() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let out = section_example("## Analytics", "example/analytics");
    assert!(out.contains("budget utilization 0.750, 3 kinds"), "{out}");
    assert!(out.contains("quota Document (count)"), "{out}");
}

/// "Tracing": a callback at TraceExclusions through the one-call path, and
/// a panicking callback returned as an error.
#[test]
fn go_readme_trace_example_runs_as_printed() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let out = section_example("## Tracing", "example/trace");
    assert!(out.starts_with("cupel.stage.classify "), "{out}");
    assert!(
        out.contains("cupel.exclusion: item 1 (Message, 3 tokens) Deduplicated"),
        "{out}"
    );
    assert!(
        out.ends_with("the trace callback panicked: exporter down\n"),
        "{out}"
    );
}

/// The README's "Counting tokens" section: its example is
/// bindings/go/example/tokens/main.go, and running it prints what the
/// section says (counts, a cut keeping both ends with its byte offsets, a
/// CJK cut, items pushed from text and the selection made from them).
#[test]
fn go_readme_tokens_example_runs_as_printed() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let root = common::root();
    let readme = readme();
    let section = &readme[readme
        .find("## Counting tokens")
        .expect("the README has a \"## Counting tokens\" section")..];
    let source = std::fs::read_to_string(root.join("bindings/go/example/tokens/main.go")).unwrap();
    assert_eq!(
        common::code_block_after(section, "## Counting tokens"),
        source,
        "the section's example is not bindings/go/example/tokens/main.go"
    );
    let out = go(&["run", "./example/tokens"]);
    assert_eq!(
        common::code_block_after(section, "prints:"),
        out,
        "the README does not show what the tokens example prints"
    );
    assert!(out.starts_with("12 tokens; [2 6]\n"), "{out}");
}

/// The README's "Items that shrink" section: its example is
/// bindings/go/example/shrink/main.go (Scenario S of the feature), and
/// running it prints what the section says: the run without a tokenizer
/// fails naming the item, then the tool output goes in as its placeholder
/// and the document cut to the 948 tokens left.
#[test]
fn go_readme_shrink_example_runs_as_printed() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let root = common::root();
    let readme = readme();
    let section = &readme[readme
        .find("## Items that shrink")
        .expect("the README has a \"## Items that shrink\" section")..];
    let source = std::fs::read_to_string(root.join("bindings/go/example/shrink/main.go")).unwrap();
    assert_eq!(
        common::code_block_after(section, "## Items that shrink"),
        source,
        "the section's example is not bindings/go/example/shrink/main.go"
    );
    let out = go(&["run", "./example/shrink"]);
    assert_eq!(
        common::code_block_after(section, "prints:"),
        out,
        "the README does not show what the shrink example prints"
    );
    assert!(
        out.contains("item 1 Variant   variant 1,  12 tokens"),
        "{out}"
    );
    assert!(
        out.contains("item 2 Truncated variant 0, 948 tokens, cut [3647, 10890): 3647 bytes"),
        "{out}"
    );
    assert!(out.ends_with("1000 tokens selected\n"), "{out}");
}

/// The README's "Sessions" section: its example is
/// bindings/go/example/session/main.go, and running it prints what the
/// section says: a first run, an append keeping the first turn's prompt as
/// the stable prefix, then a compaction, and the last run's breakpoints.
#[test]
fn go_readme_session_example_runs_as_printed() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let root = common::root();
    let readme = readme();
    let section = &readme[readme
        .find("## Sessions")
        .expect("the README has a \"## Sessions\" section")..];
    let source = std::fs::read_to_string(root.join("bindings/go/example/session/main.go")).unwrap();
    assert_eq!(
        common::code_block_after(section, "## Sessions"),
        source,
        "the section's example is not bindings/go/example/session/main.go"
    );
    let out = go(&["run", "./example/session"]);
    assert_eq!(
        common::code_block_after(section, "prints:"),
        out,
        "the README does not show what the session example prints"
    );
    assert!(out.starts_with("turn 1: first "), "{out}");
    assert!(
        out.contains("turn 2: append  [0 1 2 3 4], stable prefix 3 items (600 tokens)"),
        "{out}"
    );
    assert!(out.contains("turn 3: compact "), "{out}");
}

/// A fresh directory under the test scratch space (emptied first; the Go
/// module cache leaves read-only files, made writable to remove them).
fn fresh_dir(name: &str) -> PathBuf {
    let dir = common::out_dir("go_consumer").join(name);
    if dir.exists() {
        let _ = Command::new("chmod")
            .arg("-R")
            .arg("u+w")
            .arg(&dir)
            .status();
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `go` in the consumer module `app`, offline, with its own GOPATH (module
/// cache): nothing but the checkout can satisfy the import.
fn consumer_go(app: &Path, gopath: &Path, args: &[&str], what: &str) -> String {
    common::run(
        Command::new("go")
            .args(args)
            .current_dir(app)
            .env("CGO_ENABLED", "1")
            .env("GOPATH", gopath)
            .env("GOFLAGS", "-mod=mod")
            .env("GOPROXY", "off")
            .env("GOSUMDB", "off")
            .env("GOWORK", "off")
            .env_remove("GOMODCACHE"),
        what,
    )
}

/// The module as a user gets it: go.mod names the module path the README's
/// install line uses; a new module (`go mod init example.com/app`) takes it
/// through the README's `replace` lines, builds the README's example outside
/// the source tree, and the program prints the README's output. Then the
/// same with `-tags cupel_pkgconfig` and a cupel.pc for this checkout.
#[test]
fn go_module_builds_in_a_fresh_consumer_module() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    common::release_lib_dir();
    let root = common::root();
    let readme = readme();
    let go_mod = std::fs::read_to_string(root.join("bindings/go/go.mod")).unwrap();
    assert_eq!(
        go_mod.lines().next(),
        Some(format!("module {MODULE}").as_str()),
        "bindings/go/go.mod"
    );
    let install = common::code_block_after(&readme, "## Install");
    assert_eq!(
        install.trim(),
        format!("go get {MODULE}@latest"),
        "the install line"
    );
    assert!(
        readme.contains("bindings/go/vX.Y.Z"),
        "the README must say how the subdirectory module's versions are tagged"
    );

    let work = fresh_dir("work");
    let gopath = work.join("gopath");
    let app = work.join("app");
    std::fs::create_dir_all(&app).unwrap();
    consumer_go(
        &app,
        &gopath,
        &["mod", "init", "example.com/app"],
        "go mod init",
    );
    let replace = common::code_block_after(&readme, "To build your module against a checkout")
        .replace("/path/to/libcupel", root.to_str().unwrap());
    assert!(
        replace.contains(&format!("-replace={MODULE}=")),
        "{replace}"
    );
    common::run(
        Command::new("sh")
            .args(["-ec", &replace])
            .current_dir(&app)
            .env("GOFLAGS", "-mod=mod")
            .env("GOPROXY", "off"),
        "the README's replace lines",
    );
    std::fs::write(
        app.join("main.go"),
        common::code_block_after(&readme, "## Example"),
    )
    .unwrap();
    let want = common::code_block_after(&readme, "It prints:");

    consumer_go(
        &app,
        &gopath,
        &["build", "-o", "app", "."],
        "building the consumer",
    );
    let listed = consumer_go(&app, &gopath, &["list", "-m", "all"], "go list -m all");
    assert!(
        listed.contains(&format!(
            "{MODULE} v0.0.0 => {}",
            root.join("bindings/go").display()
        )),
        "the consumer does not use the checkout:\n{listed}"
    );
    // Run from elsewhere, without cargo's LD_LIBRARY_PATH: the rpath finds
    // the library.
    let out = common::run(
        Command::new(app.join("app"))
            .current_dir(&work)
            .env_remove("LD_LIBRARY_PATH"),
        "the consumer program",
    );
    assert_eq!(out, want, "the consumer prints otherwise than the README");

    // The pkg-config build tag, with a cupel.pc describing this checkout's
    // library (an installed one has its own; docs/install.md).
    if !common::have_toolchain("pkg-config", "pkg-config (apt-get install pkg-config)") {
        return;
    }
    let pc = work.join("pkgconfig");
    std::fs::create_dir_all(&pc).unwrap();
    let lib = root.join("target/release");
    std::fs::write(
        pc.join("cupel.pc"),
        format!(
            "Name: cupel\nDescription: libcupel (test)\nVersion: 0\n\
             Cflags: -I{inc}\nLibs: -L{lib} -Wl,-rpath,{lib} -lcupel\n",
            inc = root.join("include").display(),
            lib = lib.display()
        ),
    )
    .unwrap();
    common::run(
        Command::new("go")
            .args(["build", "-tags", "cupel_pkgconfig", "-o", "app-pc", "."])
            .current_dir(&app)
            .env("CGO_ENABLED", "1")
            .env("GOPATH", &gopath)
            .env("GOFLAGS", "-mod=mod")
            .env("GOPROXY", "off")
            .env("GOWORK", "off")
            .env("PKG_CONFIG_PATH", &pc),
        "building the consumer with -tags cupel_pkgconfig",
    );
    let out = common::run(
        Command::new(app.join("app-pc"))
            .current_dir(&work)
            .env_remove("LD_LIBRARY_PATH"),
        "the consumer program (pkg-config)",
    );
    assert_eq!(out, want, "the pkg-config build prints otherwise");
}
