//! The C# binding (bindings/csharp): built with mcs, tests run under mono by
//! the binding's own test.sh, the binding contract table run through its
//! API, the README's examples ("Example": the one-call path, "The long-hand
//! pipeline", "Policies from JSON", "Presets", "Policy sensitivity",
//! "Analytics", "Tracing", "Counting tokens", "Items that shrink",
//! "Sessions") run as printed, and its NuGet package built, installed into a
//! fresh directory and used as the README says.

mod common;

use std::path::Path;
use std::process::Command;

fn test_sh(args: &[&str]) -> String {
    common::release_lib_dir();
    let script = common::root().join("bindings/csharp/test.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(script).args(args);
    common::run(&mut cmd, "bindings/csharp/test.sh")
}

/// Whether Mono's compiler and runtime are here (under CI=true their
/// absence fails the test).
fn have_mono() -> bool {
    common::have_toolchain("mcs", "Debian's mono-mcs")
        && common::have_toolchain("mono", "Debian's mono-runtime")
}

fn readme() -> String {
    std::fs::read_to_string(common::root().join("bindings/csharp/README.md")).unwrap()
}

/// What the README says the example prints.
fn readme_output(readme: &str) -> String {
    common::code_block_after(readme, "It prints (under Mono")
}

#[test]
fn csharp_tests_pass_under_mono() {
    if !have_mono() {
        return;
    }
    let out = test_sh(&[]);
    print!("{out}");
    let last = out.lines().last().unwrap_or("");
    assert!(last.ends_with(" passed, 0 failed"), "{out}");
    for test in [
        "ConcurrentSlicing",
        "ReadBack",
        "ReasonNames",
        "NullArguments",
        "LoneSurrogates",
        "NegativeIndices",
        "DisposedArguments",
        "TokenizerCounts",
        "TokenizerTruncate",
        "TokenizerFromTiktoken",
        "TokenizerErrors",
        "PushFromText",
        "ConcurrentCounting",
        "ShrinkScenario",
        "ShrinkTextOfCuts",
        "ShrinkReadBack",
        "ShrinkErrors",
        "ItemsTruncate",
        "SessionTurns",
        "SessionVolatileFirstRun",
        "SessionCompacts",
        "SessionDuplicateKeys",
        "SessionSlack",
        "SessionOutlivesItsPipeline",
        "SessionReport",
        "SessionItemIdentity",
        "SessionDisposedAndNull",
        "SessionNames",
        "SessionFinalizers",
        "PolicyJson",
        "BudgetJson",
        "Presets",
        "Sensitivity",
        "Analytics",
        "TraceLevels",
        "TraceSwitches",
        "TraceHandlerExceptions",
        "TraceLifetimes",
        "TraceSessions",
        "SelectMatchesLongHand",
        "SelectPolicies",
        "SelectAttributes",
        "SelectTokenizers",
        "SelectErrors",
    ] {
        assert!(
            out.contains(&format!("ok   {test}\n")),
            "{test} did not run:\n{out}"
        );
    }
}

#[test]
fn csharp_runs_the_contract_table() {
    if !have_mono() {
        return;
    }
    let out = test_sh(&["--contract"]);
    print!("{out}");
    common::contract::check_summary("cs", &out);
}

#[test]
fn csharp_readme_example_runs_as_printed() {
    if !have_mono() {
        return;
    }
    let root = common::root();
    let readme = readme();
    let source = std::fs::read_to_string(root.join("bindings/csharp/example/Example.cs")).unwrap();
    assert_eq!(
        common::code_block_after(&readme, "## Example"),
        source,
        "the README's example is not bindings/csharp/example/Example.cs"
    );
    assert_eq!(
        readme_output(&readme),
        test_sh(&["--example"]),
        "the README does not show what the example prints"
    );
}

/// The README section `heading`'s example is bindings/csharp/example/`file`,
/// and `bash test.sh --<mode>` prints what the section shows; returns it.
fn section_runs_as_printed(heading: &str, file: &str, mode: &str) -> String {
    let root = common::root();
    let readme = readme();
    let source = std::fs::read_to_string(root.join("bindings/csharp/example").join(file)).unwrap();
    assert_eq!(
        common::code_block_after(&readme, heading),
        source,
        "the README's {heading:?} example is not bindings/csharp/example/{file}"
    );
    let printed = test_sh(&[&format!("--{mode}")]);
    assert_eq!(
        common::code_block_after(&readme, &format!("`bash test.sh --{mode}` runs it")),
        printed,
        "the README does not show what example/{file} prints"
    );
    printed
}

/// The README's first example is the one-call path: the kept messages in
/// prompt order, the parallel tool call kept with both its results.
#[test]
fn csharp_readme_example_is_the_one_call_path() {
    if !have_mono() {
        return;
    }
    let readme = readme();
    let first = readme.find("```csharp").expect("a C# example");
    assert!(
        readme[..first].contains("## Example"),
        "the README's first example is not the one-call path"
    );
    let example = common::code_block_after(&readme, "## Example");
    assert!(
        example.contains("Context.Select(conversation, 75, \"Chat\")"),
        "{example}"
    );
    let printed = test_sh(&["--example"]);
    assert!(
        printed.starts_with(
            "SystemPrompt You are an on-call assistant. Answer briefly.\n\
             ToolCall     kubectl logs auth-7f9; kubectl get events\n\
             ToolOutput   auth-7f9: token signature invalid (kid=2024-06)\n\
             ToolOutput   events: secret auth-keys updated at 09:13\n"
        ),
        "{printed}"
    );
    assert!(printed.contains("messages[1].Text is empty"), "{printed}");
}

#[test]
fn csharp_readme_long_hand_runs_as_printed() {
    if !have_mono() {
        return;
    }
    let printed = section_runs_as_printed("## The long-hand pipeline", "LongHand.cs", "longhand");
    assert!(
        printed.starts_with("knapsack chose [3 2 1 0] using 950 tokens\n"),
        "{printed}"
    );
}

#[test]
fn csharp_readme_policies_run_as_printed() {
    if !have_mono() {
        return;
    }
    let printed = section_runs_as_printed("## Policies from JSON", "Policy.cs", "policy");
    assert!(printed.contains("\"knapsackBucketSize\": 10,"), "{printed}");
    assert!(
        printed.ends_with("json $.scorers[0].weight: must be positive and finite (got -1)\n"),
        "{printed}"
    );
    let printed = section_runs_as_printed("## Presets", "Presets.cs", "presets");
    for name in [
        "Chat",
        "CodeReview",
        "Rag",
        "DocumentQa",
        "ToolUse",
        "LongRunning",
        "Debugging",
        "AgentLoop",
    ] {
        assert!(
            printed.contains(&format!("{name:<12} placed [")),
            "{name}: {printed}"
        );
    }
}

#[test]
fn csharp_readme_sensitivity_analytics_tracing_run_as_printed() {
    if !have_mono() {
        return;
    }
    let printed = section_runs_as_printed("## Policy sensitivity", "Sensitivity.cs", "sensitivity");
    assert!(
        printed.ends_with("item 0 (the runbook): rag only\nitem 1 (the runbook): chat only\n"),
        "{printed}"
    );
    let printed = section_runs_as_printed("## Analytics", "Analytics.cs", "analytics");
    assert!(printed.contains("budget utilization 0.65\n"), "{printed}");
    let printed = section_runs_as_printed("## Tracing", "Tracing.cs", "tracing");
    assert_eq!(
        printed
            .lines()
            .filter(|l| l.starts_with("cupel.stage."))
            .count(),
        5,
        "{printed}"
    );
    assert!(
        printed.contains("  cupel.exclusion: item 0 (Message, 100 tokens) BudgetExceeded\n"),
        "{printed}"
    );
    assert!(
        printed.ends_with("the run threw the handler's TimeoutException: exporter down\n"),
        "{printed}"
    );
}

#[test]
fn csharp_readme_counting_tokens_runs_as_printed() {
    if !have_mono() {
        return;
    }
    let root = common::root();
    let readme = readme();
    let source = std::fs::read_to_string(root.join("bindings/csharp/example/Tokens.cs")).unwrap();
    assert_eq!(
        common::code_block_after(&readme, "## Counting tokens"),
        source,
        "the README's \"Counting tokens\" example is not bindings/csharp/example/Tokens.cs"
    );
    let printed = test_sh(&["--tokens"]);
    assert_eq!(
        common::code_block_after(&readme, "`bash test.sh --tokens` runs it"),
        printed,
        "the README does not show what example/Tokens.cs prints"
    );
    // What it prints is the library's: 12 tokens for the contract's
    // sentence, and a both-ends cut that is the sentence's head and tail.
    assert!(printed.starts_with("12 tokens\n"), "{printed}");
    assert!(
        printed.contains("5 tokens: \"Hello, world tokens.\"\n"),
        "{printed}"
    );
}

/// The README's "Items that shrink" section: its example is
/// bindings/csharp/example/Shrink.cs (Scenario S of the feature), and it
/// prints what the section says: the run without a tokenizer fails naming
/// the item, then the tool output goes in as its placeholder and the
/// document cut to the 948 tokens left.
#[test]
fn csharp_readme_shrink_runs_as_printed() {
    if !have_mono() {
        return;
    }
    let root = common::root();
    let readme = readme();
    let source = std::fs::read_to_string(root.join("bindings/csharp/example/Shrink.cs")).unwrap();
    assert_eq!(
        common::code_block_after(&readme, "## Items that shrink"),
        source,
        "the README's \"Items that shrink\" example is not bindings/csharp/example/Shrink.cs"
    );
    let printed = test_sh(&["--shrink"]);
    assert_eq!(
        common::code_block_after(&readme, "`bash test.sh --shrink` runs it"),
        printed,
        "the README does not show what example/Shrink.cs prints"
    );
    assert!(
        printed.contains("item 1 Variant   variant 1,  12 tokens"),
        "{printed}"
    );
    assert!(
        printed.contains(
            "item 2 Truncated variant 0, 948 tokens, cut bytes [3647, 10890): 3647 chars"
        ),
        "{printed}"
    );
    assert!(printed.ends_with("1000 tokens selected\n"), "{printed}");
}

/// The README's "Sessions" section: its example is
/// bindings/csharp/example/Session.cs, and it prints what the section says:
/// a first run, an append keeping the first turn's prompt as the stable
/// prefix, then a compaction, and the last run's breakpoints.
#[test]
fn csharp_readme_session_runs_as_printed() {
    if !have_mono() {
        return;
    }
    let root = common::root();
    let readme = readme();
    let source = std::fs::read_to_string(root.join("bindings/csharp/example/Session.cs")).unwrap();
    assert_eq!(
        common::code_block_after(&readme, "## Sessions"),
        source,
        "the README's \"Sessions\" example is not bindings/csharp/example/Session.cs"
    );
    let printed = test_sh(&["--session"]);
    assert_eq!(
        common::code_block_after(&readme, "`bash test.sh --session` runs it"),
        printed,
        "the README does not show what example/Session.cs prints"
    );
    assert!(printed.starts_with("turn 1: first "), "{printed}");
    assert!(
        printed.contains("turn 2: append  [0 1 2 3 4], stable prefix 3 items (600 tokens)"),
        "{printed}"
    );
    assert!(printed.contains("turn 3: compact "), "{printed}");
}

/// The directory of the README's install lines where they name the feed.
const FEED_PLACEHOLDER: &str = "/path/to/libcupel/target/nuget";

#[test]
fn csharp_nuget_package_installs_and_runs_the_readme_example() {
    if !have_mono() || !common::have_toolchain("nuget", "Debian's nuget") {
        return;
    }
    common::release_lib_dir();
    let root = common::root();
    let readme = readme();
    let version = env!("CARGO_PKG_VERSION");
    // A fresh place outside the source tree, with its own HOME so that
    // nuget reads and writes no configuration or cache of the machine's.
    let tmp = std::env::temp_dir().join(format!("cupel-csharp-package-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let (feed, project, home) = (tmp.join("feed"), tmp.join("project"), tmp.join("home"));
    for dir in [&project, &home] {
        std::fs::create_dir_all(dir).unwrap();
    }

    // The package artefact.
    let mut pack = Command::new("bash");
    pack.arg(root.join("bindings/csharp/pack.sh"))
        .arg(&feed)
        .env("HOME", &home);
    let packed = common::run(&mut pack, "bindings/csharp/pack.sh");
    let nupkg = feed.join(format!("Cupel.{version}.nupkg"));
    assert_eq!(
        packed.trim(),
        nupkg.to_str().unwrap(),
        "pack.sh's last line"
    );
    assert!(nupkg.is_file(), "no {}", nupkg.display());

    // The README's install lines, run as written but for the feed's path,
    // in the fresh directory holding the README's example; nothing in the
    // environment points at the source tree.
    let install = common::code_block_after(&readme, "## Install");
    assert!(
        install.contains(FEED_PLACEHOLDER),
        "the README's install lines do not name {FEED_PLACEHOLDER}:\n{install}"
    );
    let script = install.replace(FEED_PLACEHOLDER, feed.to_str().unwrap());
    std::fs::write(
        project.join("Example.cs"),
        common::code_block_after(&readme, "## Example"),
    )
    .unwrap();
    let mut run = Command::new("bash");
    run.args(["-euo", "pipefail", "-c", &script])
        .current_dir(&project)
        .env("HOME", &home)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("MONO_PATH");
    let out = common::run(&mut run, "the C# README's install lines");

    // The installed layout.
    let installed = project.join(format!("packages/Cupel.{version}"));
    for file in [
        "lib/net45/Cupel.dll",
        "lib/net45/Cupel.xml",
        "runtimes/linux-x64/native/libcupel.so",
    ] {
        assert!(
            installed.join(file).is_file(),
            "the installed package lacks {file}"
        );
    }
    let so = std::fs::read(installed.join("runtimes/linux-x64/native/libcupel.so")).unwrap();
    assert!(
        so.starts_with(b"\x7fELF"),
        "the packaged libcupel.so is no ELF file"
    );
    assert!(
        !Path::new(&installed).starts_with(&root),
        "installed inside the source tree"
    );

    // It ran the example, which printed what the README shows.
    assert!(
        out.contains(&format!("Successfully installed 'Cupel {version}'")),
        "{out}"
    );
    let expected = readme_output(&readme);
    assert!(
        out.ends_with(&expected),
        "the installed package's example printed\n{out}\nnot the README's\n{expected}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
