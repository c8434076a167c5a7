//! The one-call path (docs/policies.md, "The one-call path") agrees across
//! the six bindings: seeded random conversations in one JSON file (texts of
//! random words, non-ASCII and JSON escapes among them, duplicates; kinds;
//! pinned messages; groups, tool-call ids and parallel calls, with empty and
//! null ones; keys, 0 among them; timestamps on none, some or all messages;
//! priorities, relevance hints and pushed scores; budgets from 0 up; the
//! policy absent, a preset name or a policy document's text; the tokenizer
//! argument absent or named), the messages each case keeps worked out here
//! with the core API by the rules written out anew, and a small driver per
//! binding (C++, Go, C#, Python, JavaScript over WebAssembly, LuaJIT) that
//! calls its `select` on every case and prints the kept indices (0-based,
//! in prompt order) or "error" (a pinned message over the budget, say).
//! Every driver must print exactly the expected lines.
//!
//! The drivers: tests/cpp/select_cross.cpp, bindings/go/cross/select,
//! bindings/csharp/cross/SelectCross.cs (`test.sh --select`),
//! bindings/python/tests/select_cross.py (the package from its sources),
//! tests/js/select_cross.mjs and bindings/lua/select_cross.lua.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use common::Rng;
use cupel::policy::{pipeline_from_json, presets::preset};
use cupel::text::tokenizer::Tokenizer;
use cupel::{Budget, Items, NewItem};
use serde_json::{json, Map, Value};

const CASES: usize = 120;

/// Words of the texts: ASCII, accents, Greek, Cyrillic, CJK, Hangul,
/// emoji (astral: two UTF-16 units), and what JSON must escape.
const WORDS: &[&str] = &[
    "the",
    "token",
    "budget",
    "call",
    "tool",
    "result",
    "model",
    "context",
    "prompt",
    "user",
    "assistant",
    "error",
    "file",
    "line",
    "refresh",
    "cache",
    "42",
    "3.14",
    "don't",
    "a-b",
    "naïve",
    "café",
    "Straße",
    "Ελληνικά",
    "данные",
    "日本語",
    "テキスト",
    "中文",
    "한국어",
    "🦀",
    "👍🏽",
    "emoji🙂",
    "say \"hi\"",
    "C:\\tmp",
    "tab\there",
    "line\nbreak",
    "ünïcödé",
];

const KINDS: &[&str] = &[
    "Message",
    "SystemPrompt",
    "ToolOutput",
    "ToolCall",
    "Document",
    "Memory",
    "systemprompt",
];

const PRESETS: &[&str] = &[
    "Chat",
    "CodeReview",
    "Rag",
    "DocumentQa",
    "ToolUse",
    "LongRunning",
    "Debugging",
    "AgentLoop",
    "agentloop",
    "CHAT",
];

/// Policy documents' texts: every placer, the slicers, quotas, scorers
/// that read the priorities, hints, pushed scores and kinds, a tokenizer of
/// their own, blanks before the brace.
const DOCUMENTS: &[&str] = &[
    r#"{"scorers":[{"type":"recency","weight":1}]}"#,
    r#"{"scorers":[{"type":"given","weight":2},{"type":"priority","weight":1}],"placerType":"none"}"#,
    r#"{"scorers":[{"type":"kind","weight":1},{"type":"reflexive","weight":2}],"slicerType":"knapsack","knapsackBucketSize":5,"placerType":"uShaped"}"#,
    r#"{"scorers":[{"type":"recency","weight":1},{"type":"kind","weight":1}],"tokenizer":"cl100k_base"}"#,
    " \n\t{\"scorers\":[{\"type\":\"priority\",\"weight\":1},{\"type\":\"recency\",\"weight\":1}],\"deduplicationEnabled\":false,\"tokenizer\":\"o200k_base\"}",
    r#"{"scorers":[{"type":"kind","weight":1},{"type":"given","weight":1}],"quotas":[{"kind":"ToolOutput","maxPercent":30}]}"#,
    r#"{"scorers":[{"type":"recency","weight":1}],"countQuotas":[{"kind":"Message","cap":3}],"placerType":"uShaped"}"#,
    r#"{"scorers":[{"type":"given","weight":1},{"type":"reflexive","weight":1}],"slicerType":"stream","streamBatchSize":3}"#,
    r#"{"scorers":[{"type":"decay","weight":1,"curve":"exponential","halfLifeSeconds":3600,"referenceUnixMillis":1700000600000},{"type":"kind","weight":1}],"overflowStrategy":"proceed","tokenizer":"cl100k_base"}"#,
];

const GROUPS: &[&str] = &["a", "b", "notes", "t1"];
const CALLS: &[&str] = &["t1", "t2", "t3", "t4", "a"];

fn pick<'a>(rng: &mut Rng, list: &[&'a str]) -> &'a str {
    list[rng.below(list.len() as u64) as usize]
}

/// A group name or call id field: a name, or now and then "" or null.
fn name(rng: &mut Rng, list: &[&str]) -> Value {
    match rng.below(10) {
        0 => json!(""),
        1 => Value::Null,
        _ => json!(pick(rng, list)),
    }
}

/// `k / 16` for a `k` below `n`: exact in binary, short in decimal, so
/// every language's JSON reader gets the same double.
fn sixteenths(rng: &mut Rng, n: u64) -> Value {
    json!(rng.below(n) as f64 / 16.0)
}

fn random_case(rng: &mut Rng, o200k: &Tokenizer) -> Value {
    let n = if rng.chance(5) { 0 } else { 1 + rng.below(12) };
    // Timestamps on no message, some or all of them.
    let stamps = rng.below(3);
    let mut texts: Vec<String> = Vec::new();
    let mut messages = Vec::new();
    for i in 0..n {
        let mut m = Map::new();
        let text = if !texts.is_empty() && rng.chance(10) {
            texts[rng.below(texts.len() as u64) as usize].clone() // deduplication
        } else {
            let words = 1 + rng.below(10);
            (0..words)
                .map(|_| pick(rng, WORDS))
                .collect::<Vec<_>>()
                .join(" ")
        };
        texts.push(text.clone());
        m.insert("text".into(), json!(text));
        if i == 0 && rng.chance(40) {
            m.insert("kind".into(), json!("SystemPrompt"));
            m.insert("pinned".into(), json!(true));
        } else {
            match rng.below(10) {
                0..=3 => {}
                4 => {
                    m.insert("kind".into(), Value::Null);
                }
                _ => {
                    m.insert("kind".into(), json!(pick(rng, KINDS)));
                }
            }
            if rng.chance(5) {
                m.insert("pinned".into(), json!(true));
            } else if rng.chance(10) {
                m.insert("pinned".into(), json!(false));
            }
        }
        if rng.chance(30) {
            m.insert("group".into(), name(rng, GROUPS));
        }
        if rng.chance(35) {
            m.insert("tool_call_id".into(), name(rng, CALLS));
        }
        if rng.chance(15) {
            // A message that makes several calls (or one, or none).
            let ids: Vec<Value> = (0..rng.below(4)).map(|_| name(rng, CALLS)).collect();
            m.insert("tool_call_ids".into(), Value::Array(ids));
        }
        if rng.chance(35) {
            let key = match rng.below(4) {
                0 => 0,
                1 => u64::MAX,
                _ => rng.next(),
            };
            // As text: a JSON number would lose bits in JavaScript and Lua.
            m.insert("key".into(), json!(key.to_string()));
        }
        if stamps == 2 || (stamps == 1 && rng.chance(50)) {
            m.insert(
                "timestamp".into(),
                json!(1_700_000_000_000_i64 + rng.below(1_000_000) as i64),
            );
        }
        if rng.chance(35) {
            m.insert("priority".into(), json!(rng.below(30) as i64 - 10));
        }
        if rng.chance(35) {
            m.insert("relevance".into(), sixteenths(rng, 17));
        }
        if rng.chance(35) {
            m.insert("score".into(), sixteenths(rng, 40));
        }
        messages.push(Value::Object(m));
    }
    let total: usize = texts.iter().map(|t| o200k.count(t)).sum();
    let max_tokens = if rng.chance(8) {
        0
    } else if rng.chance(12) {
        total as u64 + rng.below(12) // everything fits
    } else {
        rng.below(total as u64 + 1)
    };
    let mut c = Map::new();
    c.insert("max_tokens".into(), json!(max_tokens));
    match rng.below(10) {
        0 | 1 => {} // no policy: the Chat preset
        2..=5 => {
            c.insert("policy".into(), json!(pick(rng, PRESETS)));
        }
        _ => {
            c.insert("policy".into(), json!(pick(rng, DOCUMENTS)));
        }
    }
    match rng.below(10) {
        0 | 1 => {
            c.insert("tokenizer".into(), json!("cl100k_base"));
        }
        2 => {
            c.insert("tokenizer".into(), json!("o200k_base"));
        }
        _ => {}
    }
    c.insert("messages".into(), Value::Array(messages));
    Value::Object(c)
}

fn text_of<'a>(m: &'a Value, field: &str) -> Option<&'a str> {
    m.get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// A message's names: (whether it is a call id, the name).
type Names = BTreeSet<(bool, String)>;

/// The keep-together groups by the rules, worked out otherwise than the
/// bindings do (no union-find): each message's names (its non-empty group;
/// its non-empty call ids, in their own name space), then sets of messages
/// merged while two share a name; numbered by their first message.
fn reference_groups(messages: &[Value]) -> Vec<u64> {
    let names: Vec<Names> = messages
        .iter()
        .map(|m| {
            let mut s = BTreeSet::new();
            if let Some(g) = text_of(m, "group") {
                s.insert((false, g.to_string()));
            }
            if let Some(c) = text_of(m, "tool_call_id") {
                s.insert((true, c.to_string()));
            }
            for id in m
                .get("tool_call_ids")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(c) = id.as_str().filter(|c| !c.is_empty()) {
                    s.insert((true, c.to_string()));
                }
            }
            s
        })
        .collect();
    let mut sets: Vec<(BTreeSet<usize>, Names)> = names
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.is_empty())
        .map(|(i, n)| (BTreeSet::from([i]), n.clone()))
        .collect();
    'merge: loop {
        for a in 0..sets.len() {
            for b in a + 1..sets.len() {
                if !sets[a].1.is_disjoint(&sets[b].1) {
                    let (members, names) = sets.remove(b);
                    sets[a].0.extend(members);
                    sets[a].1.extend(names);
                    continue 'merge;
                }
            }
        }
        break;
    }
    sets.sort_by_key(|(members, _)| *members.first().unwrap());
    let mut groups = vec![0; messages.len()];
    for (k, (members, _)) in sets.iter().enumerate() {
        for &i in members {
            groups[i] = k as u64 + 1;
        }
    }
    groups
}

/// What `select` must give for case `c`: the kept indices in prompt order,
/// or None for a pipeline error; by the rules, with the core API.
fn reference(c: &Value) -> Option<Vec<u32>> {
    let pipeline = match c.get("policy").and_then(Value::as_str) {
        None => preset("Chat"),
        Some(p) if p.trim_start().starts_with('{') => pipeline_from_json(p.as_bytes()),
        Some(p) => preset(p),
    }
    .unwrap_or_else(|e| panic!("the policy {:?} does not read: {e}", c.get("policy")));
    let tokenizer = c
        .get("tokenizer")
        .and_then(Value::as_str)
        .or_else(|| pipeline.tokenizer.as_ref().and_then(|t| t.name()))
        .unwrap_or("o200k_base");
    let tokenizer = Tokenizer::builtin(tokenizer).unwrap();
    let messages = c["messages"].as_array().unwrap();
    let mut items = Items::new();
    let stamped = messages.iter().any(|m| m.get("timestamp").is_some());
    for (i, m) in messages.iter().enumerate() {
        let text = m["text"].as_str().unwrap();
        items
            .push(NewItem {
                tokens: tokenizer.count(text) as i64,
                score: m.get("score").and_then(Value::as_f64).unwrap_or(1.0),
                kind: m.get("kind").and_then(Value::as_str),
            })
            .unwrap();
        items.set_content(i, text).unwrap();
        if m.get("pinned").and_then(Value::as_bool) == Some(true) {
            items.set_pinned(i, true).unwrap();
        }
        if let Some(key) = m.get("key").and_then(Value::as_str) {
            items.set_key(i, key.parse().unwrap()).unwrap();
        }
        match m.get("timestamp").and_then(Value::as_i64) {
            Some(t) => items.set_timestamp(i, t).unwrap(),
            None if !stamped => items.set_timestamp(i, i as i64).unwrap(),
            None => {}
        }
        if let Some(p) = m.get("priority").and_then(Value::as_i64) {
            items.set_priority(i, p).unwrap();
        }
        if let Some(r) = m.get("relevance").and_then(Value::as_f64) {
            items.set_relevance_hint(i, r).unwrap();
        }
    }
    for (i, g) in reference_groups(messages).into_iter().enumerate() {
        if g != 0 {
            items.set_group(i, g).unwrap();
        }
    }
    let max = c["max_tokens"].as_i64().unwrap();
    let budget = Budget::new(max, max).unwrap();
    pipeline.run(&items, &budget, None).ok()
}

fn line(k: usize, kept: &Option<Vec<u32>>) -> String {
    match kept {
        Some(kept) => format!(
            "case {k}:{}",
            kept.iter().map(|i| format!(" {i}")).collect::<String>()
        ),
        None => format!("case {k}: error"),
    }
}

/// The cases' file (written once per test run) and the expected lines.
fn cases() -> &'static (PathBuf, Vec<String>) {
    static CASES_FILE: OnceLock<(PathBuf, Vec<String>)> = OnceLock::new();
    CASES_FILE.get_or_init(|| {
        let o200k = Tokenizer::builtin("o200k_base").unwrap();
        let mut rng = Rng(0x5e1e_c700_0000_0001);
        let cases: Vec<Value> = (0..CASES).map(|_| random_case(&mut rng, &o200k)).collect();
        let kept: Vec<Option<Vec<u32>>> = cases.iter().map(reference).collect();
        check_coverage(&cases, &kept);
        let expected = kept.iter().enumerate().map(|(k, v)| line(k, v)).collect();
        let path = common::out_dir("select_agreement").join("cases.json");
        std::fs::write(&path, json!({ "cases": cases }).to_string()).unwrap();
        (path, expected)
    })
}

/// The seeded cases hold what the test is about; a change of the generator
/// that lost some of it fails here, not silently.
fn check_coverage(cases: &[Value], kept: &[Option<Vec<u32>>]) {
    let messages: Vec<&Value> = cases
        .iter()
        .flat_map(|c| c["messages"].as_array().unwrap())
        .collect();
    let has = |f: &dyn Fn(&Value) -> bool| messages.iter().any(|m| f(m));
    let count = |f: &dyn Fn(&Value) -> bool| cases.iter().filter(|c| f(c)).count();
    let errors = kept.iter().filter(|k| k.is_none()).count();
    assert!(errors >= 3, "{errors} error cases");
    assert!(errors * 4 < cases.len(), "{errors} error cases");
    assert!(
        kept.iter()
            .filter(|k| matches!(k, Some(v) if v.is_empty()))
            .count()
            >= 3
    );
    let partial = cases
        .iter()
        .zip(kept)
        .filter(|(c, k)| matches!(k, Some(v) if !v.is_empty() && v.len() < c["messages"].as_array().unwrap().len()))
        .count();
    assert!(
        partial * 2 > cases.len(),
        "only {partial} cases keep some and drop some"
    );
    assert!(count(&|c| c.get("policy").is_none()) >= 10);
    assert!(count(&|c| c["max_tokens"] == 0) >= 3);
    assert!(count(&|c| c.get("tokenizer").is_some()) >= 10);
    for doc in DOCUMENTS {
        assert!(
            count(&|c| c.get("policy") == Some(&json!(doc))) >= 1,
            "{doc} unused"
        );
    }
    assert!(count(&|c| c["messages"].as_array().unwrap().is_empty()) >= 1);
    let stamped = |c: &Value| {
        let ms = c["messages"].as_array().unwrap();
        ms.iter().filter(|m| m.get("timestamp").is_some()).count() * 10 / ms.len().max(1)
    };
    assert!(
        count(&|c| stamped(c) > 0 && stamped(c) < 10) >= 5,
        "some stamped"
    );
    assert!(count(&|c| stamped(c) == 10) >= 5, "all stamped");
    assert!(has(&|m| m.get("key") == Some(&json!("0"))));
    assert!(has(&|m| m.get("group") == Some(&json!(""))));
    assert!(has(&|m| m.get("group") == Some(&Value::Null)));
    assert!(has(&|m| m.get("tool_call_id") == Some(&json!(""))));
    assert!(has(&|m| m
        .get("tool_call_ids")
        .and_then(Value::as_array)
        .is_some_and(|a| a.len() >= 2)));
    assert!(has(&|m| m
        .get("tool_call_ids")
        .and_then(Value::as_array)
        .is_some_and(|a| a.contains(&json!("")))));
    assert!(has(&|m| m
        .get("tool_call_ids")
        .and_then(Value::as_array)
        .is_some_and(|a| a.contains(&Value::Null))));
    assert!(has(&|m| m.get("kind") == Some(&Value::Null)));
    // Groups of one, and groups joined through a call with several ids.
    let groups: Vec<Vec<u64>> = cases
        .iter()
        .map(|c| reference_groups(c["messages"].as_array().unwrap()))
        .collect();
    assert!(groups
        .iter()
        .any(|g| g.iter().filter(|&&x| x == 1).count() == 1));
    assert!(groups
        .iter()
        .any(|g| g.iter().filter(|&&x| x == 1).count() >= 3));
}

/// Compares a driver's output with the expected lines.
fn compare(binding: &str, out: &str) {
    let expected = &cases().1;
    let got: Vec<&str> = out.lines().filter(|l| l.starts_with("case ")).collect();
    assert_eq!(
        got.len(),
        expected.len(),
        "{binding}: {} results for {} cases\n{out}",
        got.len(),
        expected.len()
    );
    let wrong: Vec<String> = got
        .iter()
        .zip(expected)
        .filter(|(g, w)| g != w)
        .map(|(g, w)| format!("  got  {g}\n  want {w}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "{binding} disagrees with the rules on {} of {} cases:\n{}",
        wrong.len(),
        expected.len(),
        wrong.join("\n")
    );
}

#[test]
fn cpp_select_agrees() {
    let (file, _) = cases();
    let exe = common::out_dir("select_agreement").join("select_cross_cpp");
    common::build_cpp_program(&common::root().join("tests/cpp/select_cross.cpp"), &exe);
    let out = common::run(Command::new(&exe).arg(file), "the C++ select driver");
    compare("C++", &out);
}

#[test]
fn go_select_agrees() {
    if !common::have_toolchain("go", "Debian's golang-go") {
        return;
    }
    let (file, _) = cases();
    common::release_lib_dir();
    let out = common::run(
        Command::new("go")
            .args(["run", "./cross/select"])
            .arg(file)
            .current_dir(common::root().join("bindings/go"))
            .env("CGO_ENABLED", "1"),
        "the Go select driver",
    );
    compare("Go", &out);
}

#[test]
fn csharp_select_agrees() {
    if !common::have_toolchain("mono", "Debian's mono-runtime and mono-mcs") {
        return;
    }
    let (file, _) = cases();
    common::release_lib_dir();
    let out = common::run(
        Command::new("bash")
            .arg(common::root().join("bindings/csharp/test.sh"))
            .arg("--select")
            .arg(file),
        "the C# select driver",
    );
    compare("C#", &out);
}

#[test]
fn python_select_agrees() {
    if !common::have_toolchain("python3", "Debian's python3") {
        return;
    }
    let (file, _) = cases();
    let root = common::root();
    // The package from its sources, the release library: nothing is
    // written into the tree (no bytecode), the scratch directory is the
    // working one.
    let out = common::run(
        Command::new("python3")
            .arg(root.join("bindings/python/tests/select_cross.py"))
            .arg(file)
            .current_dir(common::out_dir("select_agreement"))
            .env("PYTHONPATH", root.join("bindings/python/src"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("CUPEL_LIB", common::release_lib_dir().join("libcupel.so")),
        "the Python select driver",
    );
    compare("Python", &out);
}

/// Whether the wasm32 target is installed (under CI=true it must be).
fn have_wasm_target() -> bool {
    let out = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output();
    let found =
        out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("wasm32-unknown-unknown"));
    if !found {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("the wasm32-unknown-unknown target is not installed, and CI=true: rustup target add wasm32-unknown-unknown");
        }
        eprintln!("\n*** SKIPPED: rustup target add wasm32-unknown-unknown to run the JS select driver ***\n");
    }
    found
}

#[test]
fn js_select_agrees() {
    if !common::have_toolchain("node", "Debian's nodejs") || !have_wasm_target() {
        return;
    }
    let (file, _) = cases();
    let root = common::root();
    // cupel.wasm from the sources as they are.
    common::run(
        Command::new("bash").arg(root.join("bindings/js/build.sh")),
        "bindings/js/build.sh",
    );
    let out = common::run(
        Command::new("node")
            .arg(root.join("tests/js/select_cross.mjs"))
            .arg(file),
        "the JS select driver",
    );
    compare("JS", &out);
}

#[test]
fn lua_select_agrees() {
    if !common::have_toolchain("luajit", "Debian's luajit") {
        return;
    }
    let (file, _) = cases();
    let out = common::run(
        Command::new("luajit")
            .arg(common::root().join("bindings/lua/select_cross.lua"))
            .arg(file)
            .env("CUPEL_LIB", common::lib_dir().join("libcupel.so")),
        "the Lua select driver",
    );
    compare("Lua", &out);
}
