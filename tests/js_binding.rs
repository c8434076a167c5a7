//! The JavaScript binding over the WebAssembly build (bindings/js): builds
//! cupel.wasm, writes seeded random pipelines (every scorer, slicer,
//! placer, overflow strategy, groups) with what the native library makes of
//! them, and runs `node --test`, which checks its own cases and that the
//! WebAssembly build places the same items for the same reasons. The same
//! for the tokenizers: texts (the corpus, slices of it, adversarial and
//! random text in many scripts) with the native counts and truncations in
//! bytes, which the JS test compares with its own in UTF-16 units, and
//! tiktoken files loaded from bytes. Runs the binding contract table
//! (tests/contract/contract.txt) through the JS API. Then `npm pack`, an
//! install of the tarball into a fresh empty project (no network: the
//! package has no dependencies), and the README's four examples run
//! there (tokens.mjs, shrink.mjs and session.mjs among them), their output
//! compared with the README's.

mod common;

#[path = "../fuzz/src/pipeline_ref.rs"]
mod pipeline_ref;

#[path = "common/cases.rs"]
mod cases;

use std::process::Command;

use common::Rng;
use cupel::text::tokenizer::{Keep, Tokenizer};
use pipeline_ref::{ours_raw, Case, ScorerSpec, SlicerSpec, REFERENCE_MS};
use serde_json::{json, Value};

const CROSS_CASES: u64 = 400;

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
        eprintln!("\n*** SKIPPED: rustup target add wasm32-unknown-unknown to run the JS binding test ***\n");
    }
    found
}

/// Builds bindings/js/cupel.wasm once per test process.
fn build_wasm() {
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let root = common::root();
        common::run(
            Command::new("bash").arg(root.join("bindings/js/build.sh")),
            "bindings/js/build.sh",
        );
    });
}

fn scorer_json(s: &ScorerSpec) -> Value {
    let weights = |w: &[(String, f64)]| -> Value {
        Value::Object(w.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
    };
    match s {
        ScorerSpec::Recency => json!({ "type": "recency" }),
        ScorerSpec::Priority => json!({ "type": "priority" }),
        ScorerSpec::Kind(None) => json!({ "type": "kind" }),
        ScorerSpec::Kind(Some(w)) => json!({ "type": "kind", "weights": weights(w) }),
        ScorerSpec::Tag(w) => json!({ "type": "tag", "weights": weights(w) }),
        ScorerSpec::Frequency => json!({ "type": "frequency" }),
        ScorerSpec::Reflexive => json!({ "type": "reflexive" }),
        ScorerSpec::Composite(parts) => json!({
            "type": "composite",
            "parts": parts.iter().map(|(s, w)| json!([scorer_json(s), w])).collect::<Vec<_>>(),
        }),
        ScorerSpec::Scaled(inner) => json!({ "type": "scaled", "inner": scorer_json(inner) }),
        ScorerSpec::Trust(d) => json!({ "type": "trust", "default": d }),
        ScorerSpec::Key(k, v, b) => json!({ "type": "key", "key": k, "value": v, "boost": b }),
        ScorerSpec::Decay(curve, duration, windows, null_score) => json!({
            "type": "decay",
            "curve": curve,
            "durationSecs": duration,
            "windows": windows.iter().map(|&(a, s)| json!([a, s])).collect::<Vec<_>>(),
            "referenceTime": REFERENCE_MS,
            "nullTimestampScore": null_score,
        }),
    }
}

fn slicer_json(s: &SlicerSpec) -> Value {
    let counts = |e: &[(String, u32, u32)]| -> Vec<Value> {
        e.iter()
            .map(|(k, r, c)| json!({ "kind": k, "requireCount": r, "capCount": c }))
            .collect()
    };
    match s {
        SlicerSpec::Greedy => json!({ "type": "greedy" }),
        SlicerSpec::Knapsack(b) => json!({ "type": "knapsack", "bucket": b }),
        SlicerSpec::Quota(q) => json!({
            "type": "quota",
            "quotas": q.iter().map(|(k, r, c)| json!({ "kind": k, "requirePercent": r, "capPercent": c })).collect::<Vec<_>>(),
        }),
        SlicerSpec::CountQuota(e) => json!({ "type": "countQuota", "entries": counts(e) }),
        SlicerSpec::CountKnapsack(b, e) => {
            json!({ "type": "countKnapsack", "bucket": b, "entries": counts(e) })
        }
    }
}

fn case_json(c: &Case) -> Value {
    let items: Vec<Value> = c
        .items
        .iter()
        .map(|it| {
            let mut m = json!({
                "tokens": it.tokens,
                "kind": it.kind,
                "content": it.content,
                "pinned": it.pinned,
                "tags": it.tags,
                "metadata": Value::Object(it.metadata.iter().map(|(k, v)| (k.clone(), json!(v))).collect()),
                "group": it.group,
            });
            if let Some(t) = it.timestamp {
                m["timestamp"] = json!(t);
            }
            if let Some(p) = it.priority {
                m["priority"] = json!(p);
            }
            if let Some(h) = it.hint {
                m["relevanceHint"] = json!(h);
            }
            m
        })
        .collect();
    let scorer = scorer_json(&c.scorer);
    json!({
        "items": items,
        "scorer": scorer,
        "slicer": slicer_json(&c.slicer),
        "uShaped": c.u_shaped,
        "deduplication": c.dedup,
        "overflow": c.overflow,
        "budget": { "maxTokens": c.max, "targetTokens": c.target, "outputReserve": c.reserve },
    })
}

/// Seeded pipelines with random groups, and the native library's results.
fn cross_cases() -> Value {
    let mut rng = Rng(0x15_0000_0000_0001);
    let mut all = Vec::new();
    for _ in 0..CROSS_CASES {
        let mut c = cases::random_case(&mut rng);
        if rng.chance(50) {
            for it in &mut c.items {
                if rng.chance(40) {
                    it.group = 1 + rng.below(4);
                }
            }
        }
        // SAFETY: ours_raw makes and frees its own handles.
        let expected = match unsafe { ours_raw(&c) } {
            Ok((_, (placed, included, excluded))) => {
                let reasons = |ds: &[cupel::ffi::cupel_decision]| -> Vec<Value> {
                    ds.iter().map(|d| json!([d.item_index, d.reason])).collect()
                };
                json!({ "placed": placed, "included": reasons(&included), "excluded": reasons(&excluded) })
            }
            Err(status) => json!({ "error": status as i32 }),
        };
        all.push(json!({ "case": case_json(&c), "expected": expected }));
    }
    Value::Array(all)
}

/// The manifest directory of the tiktoken-rs crate (its vocabulary files),
/// from `cargo metadata`.
fn tiktoken_assets() -> std::path::PathBuf {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(common::root().join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo metadata failed");
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pkg = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "tiktoken-rs")
        .expect("tiktoken-rs in the dependency graph");
    std::path::PathBuf::from(pkg["manifest_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .join("assets")
}

/// The largest character boundary of `s` at or below `at`.
fn floor_boundary(s: &str, mut at: usize) -> usize {
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Texts for the tokenizer cross-check: the corpus (prose in many scripts,
/// code, JSON, logs, CRLF, emoji), slices of it cut at arbitrary character
/// boundaries, inputs that stress offsets and splitters, and random text
/// over an alphabet with astral characters (two UTF-16 units each).
fn token_texts() -> Vec<String> {
    let dir = common::root().join("tests/text/corpus");
    let mut corpus: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|x| x != "md"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    corpus.sort();
    assert!(
        corpus.len() >= 8,
        "the corpus is missing: {}",
        dir.display()
    );
    let mut rng = Rng(0x26_0000_0000_0001);
    let mut texts: Vec<String> = corpus.iter().map(|(_, t)| t.clone()).collect();
    for (_, t) in &corpus {
        for _ in 0..4 {
            let a = floor_boundary(t, rng.below(t.len() as u64) as usize);
            let b = floor_boundary(t, (a + 1 + rng.below(600) as usize).min(t.len()));
            if b > a {
                texts.push(t[a..b].to_string());
            }
        }
    }
    for t in [
        "日本語のテキスト",
        "日本語のテキストを数えます。漢字とかなとカナ、そして English も。",
        "🦀🦀🦀 crabs 🦀 and 👩‍👩‍👧‍👦 a family, 👍🏽 a thumb, 🇯🇵 a flag",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙 𝟘𝟙𝟚 and 𠀀𠀁𠀂 (CJK extension B)",
        "e\u{301}a\u{308}o\u{302} combining marks",
        "<|endoftext|> is ordinary text here <|fim_prefix|>",
        "a NUL \0 inside, and a tab\t",
        "",
        " ",
    ] {
        texts.push(t.to_string());
    }
    texts.push("🦀".repeat(300));
    texts.push("a".repeat(3000));
    texts.push(" ".repeat(1000));
    texts.push("漢".repeat(700));
    texts.push("\r\n".repeat(300));
    texts.push("1".repeat(1000));
    const ALPHABET: &[&str] = &[
        "a", "Z", "é", "ß", "中", "ア", "한", "я", "\u{301}", "0", "7", "٣", " ", "  ", "\t", "\n",
        "\r\n", "\u{a0}", "'s", ".", ",", "!", "😀", "👍🏽", "\u{200d}", "\u{fe0f}", "𝔘", "𠀀", "€",
    ];
    for _ in 0..120 {
        let n = 1 + rng.below(80) as usize;
        texts.push(
            (0..n)
                .map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize])
                .collect(),
        );
    }
    texts
}

/// The tokenizer cross-check: texts, and for each built-in encoding the
/// native counts and truncations (byte offsets) by every keep at several
/// budgets; and tiktoken files with their patterns and native counts.
fn token_cases() -> Value {
    let texts = token_texts();
    let keeps = [
        ("head", Keep::Head),
        ("tail", Keep::Tail),
        ("both_ends", Keep::BothEnds),
    ];
    let mut encodings = serde_json::Map::new();
    for name in ["o200k_base", "cl100k_base"] {
        let t = Tokenizer::builtin(name).unwrap();
        let counts: Vec<usize> = texts.iter().map(|x| t.count(x)).collect();
        let mut cuts = Vec::new();
        for (i, x) in texts.iter().enumerate() {
            let n = counts[i];
            let mut maxes = vec![0, 1, 2, 3, 5, n / 3, n / 2, n.saturating_sub(1), n, n + 1];
            maxes.sort_unstable();
            maxes.dedup();
            for m in maxes {
                for (keep_name, keep) in keeps {
                    let c = t.truncate(x, m, keep);
                    cuts.push(json!([i, m, keep_name, c.head_end, c.tail_start, c.tokens]));
                }
            }
        }
        encodings.insert(name.into(), json!({ "counts": counts, "cuts": cuts }));
    }
    // r50k/p50k's pattern (the general engine), as tests/text.rs writes it.
    const GPT2: &str =
        r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
    let assets = tiktoken_assets();
    let mut files = Vec::new();
    for (file, pattern) in [
        (
            "cl100k_base.tiktoken",
            Some(cupel::text::pretok::Pattern::CL100K),
        ),
        ("r50k_base.tiktoken", Some(GPT2)),
        ("o200k_base.tiktoken", None),
    ] {
        let path = assets.join(file);
        let bytes = std::fs::read(&path).unwrap();
        let t = Tokenizer::from_tiktoken(&bytes, pattern).unwrap();
        let counts: Vec<usize> = texts.iter().map(|x| t.count(x)).collect();
        files.push(json!({ "path": path, "pattern": pattern, "counts": counts }));
    }
    json!({ "texts": texts, "encodings": encodings, "files": files })
}

#[test]
fn node_tests_pass_and_wasm_agrees_with_native() {
    if !common::have_toolchain("node", "Debian's nodejs") || !have_wasm_target() {
        return;
    }
    build_wasm();
    let dir = common::out_dir("js_binding");
    let cases = dir.join("cross_cases.json");
    std::fs::write(&cases, cross_cases().to_string()).unwrap();
    let token_cases_path = dir.join("token_cases.json");
    std::fs::write(&token_cases_path, token_cases().to_string()).unwrap();
    let root = common::root();
    let out = common::run(
        Command::new("node")
            .args(["--test", "--test-reporter=spec", "bindings/js/test/"])
            .current_dir(&root)
            .env("CUPEL_CROSS_CASES", &cases)
            .env("CUPEL_TOKEN_CASES", &token_cases_path),
        "node --test",
    );
    print!("{out}");
    assert!(out.contains("wasm agrees with native"), "{out}");
    assert!(
        out.contains("tokenizers in wasm agree with native"),
        "{out}"
    );
    assert!(
        out.contains("ℹ fail 0") && out.contains("ℹ skipped 0"),
        "{out}"
    );
}

#[test]
fn contract_table_passes_through_the_js_api() {
    if !common::have_toolchain("node", "Debian's nodejs") || !have_wasm_target() {
        return;
    }
    build_wasm();
    let root = common::root();
    let out = common::run(
        Command::new("node")
            .arg(root.join("bindings/js/test/contract.mjs"))
            .env("CUPEL_CONTRACT", common::contract::path()),
        "node bindings/js/test/contract.mjs",
    );
    print!("{out}");
    common::contract::check_summary("js", &out);
}

/// The fenced block that follows the line holding `marker` in `text`.
fn block_after<'a>(text: &'a str, marker: &str) -> &'a str {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("README: no {marker:?}"));
    let rest = &text[at..];
    let open = rest
        .find("\n```")
        .expect("README: a fenced block after the marker")
        + 1;
    let body = rest[open..].find('\n').unwrap() + open + 1;
    let close = rest[body..]
        .find("\n```")
        .expect("README: the block is not closed")
        + body;
    &rest[body..close + 1]
}

/// The number before `unit` in `text` (e.g. "181 kB packed" -> 181).
fn number_before(text: &str, unit: &str) -> f64 {
    let at = text
        .find(unit)
        .unwrap_or_else(|| panic!("README: no {unit:?}"));
    let digits: String = text[..at]
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits.chars().rev().collect::<String>().parse().unwrap()
}

#[test]
fn npm_pack_installs_in_a_fresh_project_and_runs_the_readme_example() {
    if !common::have_toolchain("node", "Debian's nodejs")
        || !common::have_toolchain("npm", "Debian's npm")
        || !have_wasm_target()
    {
        return;
    }
    build_wasm();
    let root = common::root();
    let js = root.join("bindings/js");
    let readme = std::fs::read_to_string(js.join("README.md")).unwrap();
    let dir = common::out_dir("js_pack");
    let _ = std::fs::remove_dir_all(&dir);
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let npm = |args: &[&str], cwd: &std::path::Path| {
        let mut cmd = Command::new("npm");
        cmd.args(args)
            .current_dir(cwd)
            .env("npm_config_cache", dir.join("npm-cache"))
            .env("npm_config_update_notifier", "false");
        cmd
    };
    let pack_dir = dir.to_str().unwrap();
    let packed = common::run(
        &mut npm(&["pack", "--json", "--pack-destination", pack_dir], &js),
        "npm pack",
    );
    let packed: Value = serde_json::from_str(&packed).unwrap();
    let tgz = dir.join(packed[0]["filename"].as_str().unwrap());
    assert!(tgz.exists(), "npm pack made no {}", tgz.display());

    // The README's size figures, within 15% of what npm packed.
    for (unit, key) in [("kB packed", "size"), ("kB unpacked", "unpackedSize")] {
        let said = number_before(&readme, unit) * 1000.0;
        let real = packed[0][key].as_f64().unwrap();
        assert!(
            (said - real).abs() <= real * 0.15,
            "README says {said} bytes {unit}; npm pack says {real}"
        );
    }

    // A fresh project (its own package.json, so npm installs there and
    // nowhere above it) that installs the tarball, as the README says.
    std::fs::write(
        project.join("package.json"),
        r#"{ "name": "libcupel-install-check", "private": true, "type": "module" }"#,
    )
    .unwrap();
    assert!(
        readme.contains("npm install /path/to/libcupel-0.2.0.tgz"),
        "the README's install line"
    );
    assert_eq!(
        packed[0]["filename"].as_str(),
        Some("libcupel-0.2.0.tgz"),
        "the README names this tarball"
    );
    common::run(
        &mut npm(
            &[
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                tgz.to_str().unwrap(),
            ],
            &project,
        ),
        "npm install",
    );
    let installed = project.join("node_modules/libcupel");
    for f in [
        "index.js",
        "index.d.ts",
        "cupel.wasm",
        "example.mjs",
        "tokens.mjs",
        "shrink.mjs",
        "session.mjs",
        "LICENSE-vocabularies.txt",
        "README.md",
        "package.json",
    ] {
        assert!(installed.join(f).exists(), "the package lacks {f}");
    }
    assert!(
        !installed.join("test").exists(),
        "the package ships its tests"
    );

    // The README's example is example.mjs, and prints what the README shows.
    let example = block_after(&readme, "<!-- example: example.mjs");
    assert_eq!(
        example,
        std::fs::read_to_string(installed.join("example.mjs")).unwrap(),
        "the README's example and example.mjs differ"
    );
    std::fs::write(project.join("example.mjs"), example).unwrap();
    let out = common::run(
        Command::new("node")
            .arg("example.mjs")
            .current_dir(&project),
        "the README's example",
    );
    print!("{out}");
    assert_eq!(
        out,
        block_after(&readme, "<!-- output -->"),
        "the README's output block"
    );

    // "Counting tokens": tokens.mjs, its output, and the vocabularies inside
    // the module (with their licence notice, in the package).
    let tokens = block_after(&readme, "<!-- example: tokens.mjs");
    assert_eq!(
        tokens,
        std::fs::read_to_string(installed.join("tokens.mjs")).unwrap(),
        "the README's token example and tokens.mjs differ"
    );
    std::fs::write(project.join("tokens.mjs"), tokens).unwrap();
    let out = common::run(
        Command::new("node").arg("tokens.mjs").current_dir(&project),
        "the README's token example",
    );
    print!("{out}");
    assert_eq!(
        out,
        block_after(&readme, "<!-- output: tokens.mjs -->"),
        "the README's token output block"
    );
    assert!(readme.contains("## Counting tokens"));

    // "Items that shrink": shrink.mjs (variants, truncation, the text as
    // sent) and its output.
    let shrink = block_after(&readme, "<!-- example: shrink.mjs");
    assert_eq!(
        shrink,
        std::fs::read_to_string(installed.join("shrink.mjs")).unwrap(),
        "the README's shrink example and shrink.mjs differ"
    );
    std::fs::write(project.join("shrink.mjs"), shrink).unwrap();
    let out = common::run(
        Command::new("node").arg("shrink.mjs").current_dir(&project),
        "the README's shrink example",
    );
    print!("{out}");
    assert_eq!(
        out,
        block_after(&readme, "<!-- output: shrink.mjs -->"),
        "the README's shrink output block"
    );
    assert!(readme.contains("## Items that shrink"));

    // "Sessions": session.mjs (three turns: the action, the stable prefix
    // and the breakpoints of each) and its output.
    let session = block_after(&readme, "<!-- example: session.mjs");
    assert_eq!(
        session,
        std::fs::read_to_string(installed.join("session.mjs")).unwrap(),
        "the README's session example and session.mjs differ"
    );
    std::fs::write(project.join("session.mjs"), session).unwrap();
    let out = common::run(
        Command::new("node")
            .arg("session.mjs")
            .current_dir(&project),
        "the README's session example",
    );
    print!("{out}");
    assert_eq!(
        out,
        block_after(&readme, "<!-- output: session.mjs -->"),
        "the README's session output block"
    );
    assert!(readme.contains("## Sessions"));
    assert!(
        readme.contains("UTF-8 byte offsets"),
        "the README says the cut's offsets are bytes"
    );
    assert!(
        readme.contains("vocabularies are inside the module"),
        "the README says where the vocabularies are"
    );
    assert_eq!(
        std::fs::read(installed.join("LICENSE-vocabularies.txt")).unwrap(),
        std::fs::read(root.join("src/text/data/LICENSE")).unwrap(),
        "the vocabularies' licence notice in the package"
    );

    // One Node.js version everywhere: package.json's engines, the README,
    // and the node that ran all this.
    let package: Value =
        serde_json::from_str(&std::fs::read_to_string(js.join("package.json")).unwrap()).unwrap();
    let engines = package["engines"]["node"].as_str().unwrap();
    let min: u32 = engines.trim_start_matches(">=").parse().unwrap();
    assert!(
        readme.contains(&format!("Node.js >= {min}")),
        "the README does not say Node.js >= {min} (engines {engines})"
    );
    let version = common::run(Command::new("node").arg("--version"), "node --version");
    let major: u32 = version
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        major >= min,
        "node {version} is older than engines {engines}"
    );

    // The README's test commands name paths that exist.
    let tests = block_after(&readme, "## Tests");
    for path in tests
        .split_whitespace()
        .filter(|w| w.starts_with("bindings/js/"))
    {
        assert!(root.join(path).exists(), "README: {path} does not exist");
    }
    assert!(tests.contains("cargo test --release --test js_binding"));
}
