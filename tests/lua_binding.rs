//! The LuaJIT binding (bindings/lua): its cdef file matches the header, its
//! test suite and the binding contract pass under Debian's luajit, the
//! README's examples (the one-call path first, then the pipeline long-hand,
//! "Counting tokens", "Items that shrink", "Sessions", "Policies from JSON",
//! "Presets", "Policy sensitivity", "Analytics" and "Tracing") are the files
//! that run and print what the README shows, and the LuaRocks package
//! installs into a fresh tree and runs them from there.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn lib() -> PathBuf {
    common::lib_dir().join("libcupel.so")
}

fn luajit(script: &str) -> String {
    let root = common::root();
    common::run(
        Command::new("luajit")
            .arg(root.join(script))
            .env("CUPEL_LIB", lib())
            .env("CUPEL_CONTRACT", common::contract::path()),
        script,
    )
}

fn readme() -> String {
    std::fs::read_to_string(common::root().join("bindings/lua/README.md")).unwrap()
}

/// The README's examples: the section heading each follows, and the file it
/// must equal. The one-call path is the first.
const EXAMPLES: [(&str, &str); 10] = [
    ("## Example", "example.lua"),
    ("## The pipeline, long-hand", "example_pipeline.lua"),
    ("## Counting tokens", "example_tokens.lua"),
    ("## Items that shrink", "example_shrink.lua"),
    ("## Sessions", "example_session.lua"),
    ("## Policies from JSON", "example_policy.lua"),
    ("## Presets", "example_presets.lua"),
    ("## Policy sensitivity", "example_sensitivity.lua"),
    ("## Analytics", "example_analytics.lua"),
    ("## Tracing", "example_trace.lua"),
];

/// The example of section `heading` (the first code block after it) and the
/// output it shows (the code block after the section's next "It prints:").
fn readme_section_example(heading: &str) -> (String, String) {
    let readme = readme();
    let at = readme
        .find(&format!("{heading}\n"))
        .unwrap_or_else(|| panic!("the README has no {heading:?} section"));
    let section = &readme[at..];
    (
        common::code_block_after(section, heading),
        common::code_block_after(section, "It prints:"),
    )
}

fn readme_session_example() -> (String, String) {
    readme_section_example("## Sessions")
}

/// The README's examples: its code, the file it must equal, its output.
fn readme_examples() -> Vec<(String, &'static str, String)> {
    EXAMPLES
        .iter()
        .map(|&(heading, file)| {
            let (code, output) = readme_section_example(heading);
            (code, file, output)
        })
        .collect()
}

/// The first example is the one-call path, with a tool call whose results
/// are kept or dropped together.
#[test]
fn lua_first_example_is_the_one_call_path() {
    let readme = readme();
    let first = readme.find("```lua").expect("a Lua code block");
    assert!(
        readme[..first].contains("## Example\n"),
        "the first Lua block is not the \"## Example\" section's"
    );
    let (code, output) = readme_section_example("## Example");
    for needle in [
        "cupel.select(",
        "tool_call_ids",
        "tool_call_id =",
        "pinned = true",
        "policy = \"Chat\"",
    ] {
        assert!(code.contains(needle), "example.lua has no {needle}");
    }
    assert!(
        output.contains("max_tokens = 200: 7 of 7 messages"),
        "{output}"
    );
    assert!(
        output.contains("max_tokens = 120: 4 of 7 messages"),
        "{output}"
    );
}

/// The rockspec for this version of the library.
fn rockspec_name() -> String {
    format!("cupel-{}-1.rockspec", env!("CARGO_PKG_VERSION"))
}

#[test]
fn cdef_is_the_header_without_comments_and_preprocessor_lines() {
    // build.rs derives it from the fresh header; a stale commit fails here.
    let generated = std::fs::read_to_string(env!("CUPEL_GENERATED_CDEF")).unwrap();
    let committed = std::fs::read_to_string(env!("CUPEL_COMMITTED_CDEF")).unwrap();
    assert!(
        committed == generated,
        "bindings/lua/cupel_cdef.h was stale when this build started: commit the regenerated one"
    );
    assert!(!generated.lines().any(|l| l.trim_start().starts_with('#')));
    let header = std::fs::read_to_string(common::root().join("include/cupel.h")).unwrap();
    for name in header.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if name.starts_with("cupel_") && header.contains(&format!("{name}(")) {
            assert!(
                generated.contains(&format!("{name}(")),
                "{name} is not in the cdef"
            );
        }
    }
}

#[test]
fn lua_tests_pass() {
    if !common::have_toolchain("luajit", "Debian's luajit") {
        return;
    }
    let out = luajit("bindings/lua/test.lua");
    print!("{out}");
    assert!(out.contains(" passed, 0 failed"), "{out}");
    for name in [
        "ok   a tool call and its result are never split",
        "ok   items read back as tables: every attribute, absent ones nil, 1-based",
        "ok   reason names come from cupel_reason_str",
        "ok   marginal_items and find_min_budget take the C ABI's argument order",
        "ok   a tokenizer counts: the built-in encodings, many texts at once, NUL bytes",
        "ok   a tiktoken vocabulary from bytes: counts by hand, its pattern, truncation in 1-based bytes",
        "ok   truncating non-ASCII text with the built-in encodings keeps whole characters",
        "ok   items from text: one, many with attributes, all or nothing",
        "ok   tokenizer errors name the argument, the line or the byte",
        "ok   items that shrink: scenario S with greedy and knapsack",
        "ok   items that shrink: variants and truncation read back",
        "ok   items that shrink: the text as sent is the cut, in 1-based bytes",
        "ok   items that shrink: no content, variants without content, the slice stage",
        "ok   items that shrink: the pipeline keeps its tokenizer; nil removes it",
        "ok   items that shrink: bad arguments name themselves and change nothing",
        "ok   items:truncate removes the items after the first len",
        "ok   sessions: keys and volatile flags, one at a time, in bulk and in item tables, read back",
        "ok   sessions: first, append, a new item last, a volatile item last",
        "ok   sessions: a failed run changes nothing; duplicate keys name both items",
        "ok   sessions: slack, reset, a freed pipeline, freed handles",
        "ok   sessions: an item the last run left out is Deferred while the session appends",
        "ok   policies from JSON: read, written back exactly, every error with its path and status",
        "ok   budgets from JSON: read, written back exactly, errors",
        "ok   presets: docs/policies.md's table through to_json, names case-insensitive, unknown ones",
        "ok   policy sensitivity: diffs by index, two items of the same content are two diffs",
        "ok   analytics: a run's report, an empty report, a zero budget",
        "ok   tracing: events per level (6, 7, 9), in order, and their fields",
        "ok   tracing: an error in the callback is raised after the run; the run's handles cannot change",
        "ok   tracing: the callback lives while a pipeline or a session holds it, and is freed after",
        "ok   tracing: traced runs in hot loops (the JIT never calls a callback)",
        "ok   the one-call path equals the long-hand pipeline: tool calls, parallel calls, a pinned system prompt",
        "ok   the one-call path: a policy document, a pipeline, a budget, timestamps, the tokenizer's precedence",
        "ok   the one-call path: bad input names messages[i].field, the budget, the policy, the tokenizer",
    ] {
        assert!(out.contains(name), "{name:?} did not pass:\n{out}");
    }
}

#[test]
fn lua_contract() {
    if !common::have_toolchain("luajit", "Debian's luajit") {
        return;
    }
    let out = luajit("bindings/lua/contract.lua");
    print!("{out}");
    common::contract::check_summary("lua", &out);
}

/// The "Sessions" example shows the three actions, each with its stable
/// prefix, and uses the session API it documents.
#[test]
fn lua_session_example_shows_first_append_and_compact() {
    let (code, output) = readme_session_example();
    for needle in [
        "cupel.session(",
        "key = m.key",
        "volatile = true",
        ":stable_prefix()",
        ":last_action()",
        ":breakpoints()",
    ] {
        assert!(code.contains(needle), "example_session.lua has no {needle}");
    }
    for line in [
        "turn 1: first, prompt 1 2 notes; stable prefix 0 items, 0 tokens\n",
        "turn 2: append, prompt 1 2 3 4 notes; stable prefix 2 items, 240 tokens\n",
        "turn 3: compact,",
    ] {
        assert!(output.contains(line), "{output}");
    }
}

#[test]
fn lua_readme_examples_run_as_printed() {
    if !common::have_toolchain("luajit", "Debian's luajit") {
        return;
    }
    let root = common::root();
    for (code, file, output) in readme_examples() {
        let path = root.join("bindings/lua").join(file);
        let source = std::fs::read_to_string(&path).unwrap();
        assert_eq!(code, source, "the README's example is not {file}");
        let out = common::run(
            Command::new("luajit")
                .arg(&path)
                .env("LUA_PATH", root.join("bindings/lua/?.lua"))
                .env("CUPEL_LIB", lib()),
            file,
        );
        assert_eq!(out, output, "{file} does not print what the README shows");
    }
}

#[test]
fn rockspec_is_this_version_and_the_readme_installs_it() {
    let root = common::root();
    let name = rockspec_name();
    let spec = std::fs::read_to_string(root.join("bindings/lua").join(&name))
        .unwrap_or_else(|e| panic!("bindings/lua/{name}: {e}"));
    let version = format!("version = \"{}-1\"", env!("CARGO_PKG_VERSION"));
    assert!(spec.contains(&version), "{name} lacks {version}");
    assert!(
        spec.contains("cupel_cdef = \"cupel_cdef.h\""),
        "{name} must install cupel_cdef.h"
    );
    let install = common::code_block_after(&readme(), "## Install");
    assert_eq!(install.trim(), format!("luarocks make --local {name}"));
}

/// Copies the files of `from` (not its subdirectories) into `to`.
fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn lua_rock_installs_into_a_fresh_tree_and_runs_the_readme_examples() {
    if !common::have_toolchain("luajit", "Debian's luajit")
        || !common::have_toolchain("luarocks", "Debian's luarocks")
    {
        return;
    }
    let base = common::out_dir("lua_rock");
    for sub in ["src", "tree", "home", "scratch"] {
        let _ = std::fs::remove_dir_all(base.join(sub));
    }
    let (src, tree, home, scratch) = (
        base.join("src"),
        base.join("tree"),
        base.join("home"),
        base.join("scratch"),
    );
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    // The package is built from a copy of bindings/lua, so that nothing
    // is written into the source tree.
    copy_files(&common::root().join("bindings/lua"), &src);
    let luarocks = |args: &[&str], dir: &Path, what: &str| {
        common::run(
            Command::new("luarocks")
                .args(args)
                .current_dir(dir)
                .env("HOME", &home)
                .env_remove("LUA_PATH")
                .env_remove("LUA_CPATH"),
            what,
        )
    };
    let spec = rockspec_name();
    luarocks(
        &["make", "--pack-binary-rock", &spec],
        &src,
        "luarocks make --pack-binary-rock",
    );
    let rock = src.join(spec.replace(".rockspec", ".all.rock"));
    assert!(rock.exists(), "no {} was packed", rock.display());
    let tree_arg = tree.to_str().unwrap();
    luarocks(
        &[
            "install",
            "--tree",
            tree_arg,
            "--deps-mode",
            "none",
            rock.to_str().unwrap(),
        ],
        &scratch,
        "luarocks install of the packed rock",
    );
    // LUA_PATH: the tree's entries of `luarocks path`, and nothing else.
    let paths = luarocks(
        &["path", "--tree", tree_arg, "--lr-path"],
        &scratch,
        "luarocks path",
    );
    let lua_path: Vec<&str> = paths
        .trim()
        .split(';')
        .filter(|p| p.starts_with(tree_arg))
        .collect();
    assert!(!lua_path.is_empty(), "no entry of {tree_arg} in {paths}");
    let lua_path = lua_path.join(";");
    let luajit_in_scratch = |args: &[&str], what: &str| {
        common::run(
            Command::new("luajit")
                .args(args)
                .current_dir(&scratch)
                .env("LUA_PATH", &lua_path)
                .env("LUA_CPATH", "")
                .env("CUPEL_LIB", lib()),
            what,
        )
    };
    let found = luajit_in_scratch(
        &["-e", "io.write(package.searchpath('cupel', package.path))"],
        "finding cupel",
    );
    assert!(
        Path::new(&found).starts_with(&tree) && found.ends_with("cupel.lua"),
        "require('cupel') finds {found}, not the installed rock"
    );
    assert!(
        Path::new(&found).with_file_name("cupel_cdef.h").exists(),
        "the rock did not install cupel_cdef.h beside cupel.lua"
    );
    for (code, file, output) in readme_examples() {
        std::fs::write(scratch.join(file), code).unwrap();
        let out = luajit_in_scratch(&[file], "the README example from the installed rock");
        assert_eq!(
            out, output,
            "the installed rock's {file} does not print what the README shows"
        );
    }
}
