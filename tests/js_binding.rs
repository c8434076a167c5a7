//! The JavaScript binding over the WebAssembly build (bindings/js): builds
//! cupel.wasm, writes seeded random pipelines (every scorer, slicer,
//! placer, overflow strategy, groups) with what the native library makes of
//! them, and runs `node --test`, which checks its own cases and that the
//! WebAssembly build places the same items for the same reasons. The same
//! for the tokenizers: texts (the corpus, slices of it, adversarial and
//! random text in many scripts) with the native counts and truncations in
//! bytes, which the JS test compares with its own in UTF-16 units, and
//! tiktoken files loaded from bytes. The OpenTelemetry tests need
//! @opentelemetry/api and @opentelemetry/sdk-trace-base: `npm ci` installs
//! the versions pinned in bindings/js/test/otel (package.json and its
//! lockfile) into target/tmp/js_otel, once (a failed install fails under
//! CI=true, and skips those tests elsewhere). Runs the binding contract
//! table (tests/contract/contract.txt) through the JS API. Then `npm
//! pack`, an install of the tarball into a fresh empty project (no
//! network: the package has no dependencies; its one peer dependency,
//! @opentelemetry/api, is optional), and every example of the README run
//! there (example.mjs, the one-call path, first; otel.mjs with the pinned
//! OpenTelemetry packages linked into the project), their output compared
//! with the README's.

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

/// The README's examples, in the README's order, each shipped in the package.
const EXAMPLES: [&str; 11] = [
    "example.mjs",
    "pipeline.mjs",
    "tokens.mjs",
    "shrink.mjs",
    "session.mjs",
    "policy.mjs",
    "presets.mjs",
    "sensitivity.mjs",
    "analytics.mjs",
    "tracing.mjs",
    "otel.mjs",
];

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

/// The node_modules holding the pinned @opentelemetry/api and
/// @opentelemetry/sdk-trace-base (bindings/js/test/otel), installed by `npm
/// ci` into target/tmp/js_otel once (again only when the lockfile
/// changed). None when npm is missing or the install failed outside CI;
/// under CI=true either fails the test.
fn otel_modules() -> Option<std::path::PathBuf> {
    static MODULES: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    MODULES
        .get_or_init(|| {
            let ci = std::env::var("CI").as_deref() == Ok("true");
            if !common::have_toolchain("npm", "Debian's npm") {
                return None;
            }
            let pinned = common::root().join("bindings/js/test/otel");
            let dir = common::out_dir("js_otel");
            let lock = std::fs::read(pinned.join("package-lock.json")).unwrap();
            let modules = dir.join("node_modules");
            let stamp = dir.join("installed-from.lock");
            if std::fs::read(&stamp).ok().as_deref() == Some(&lock[..])
                && modules.join("@opentelemetry/sdk-trace-base/package.json").exists()
            {
                return Some(modules);
            }
            for f in ["package.json", "package-lock.json"] {
                std::fs::copy(pinned.join(f), dir.join(f)).unwrap();
            }
            let _ = std::fs::remove_file(&stamp);
            let out = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&dir)
                .env("npm_config_cache", dir.join("npm-cache"))
                .env("npm_config_update_notifier", "false")
                .output();
            match out {
                Ok(o) if o.status.success() => {
                    std::fs::write(&stamp, &lock).unwrap();
                    Some(modules)
                }
                other => {
                    let why = match other {
                        Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                        Err(e) => e.to_string(),
                    };
                    if ci {
                        panic!("npm ci of bindings/js/test/otel failed, and CI=true:\n{why}");
                    }
                    eprintln!("\n*** SKIPPED: the OpenTelemetry tests of bindings/js (npm ci failed: {why}) ***\n");
                    None
                }
            }
        })
        .clone()
}

/// The OpenTelemetry tests in bindings/js/test/otel.test.mjs.
const OTEL_TESTS: usize = 4;

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
    let otel = otel_modules();
    let mut node = Command::new("node");
    node.args(["--test", "--test-reporter=spec", "bindings/js/test/"])
        .current_dir(&root)
        .env("CUPEL_CROSS_CASES", &cases)
        .env("CUPEL_TOKEN_CASES", &token_cases_path)
        .env_remove("NODE_PATH")
        .env_remove("CUPEL_OTEL_NODE_MODULES");
    if let Some(modules) = &otel {
        // index.js finds @opentelemetry/api through require, as a host's would.
        node.env("CUPEL_OTEL_NODE_MODULES", modules)
            .env("NODE_PATH", modules);
    }
    let out = common::run(&mut node, "node --test");
    print!("{out}");
    assert!(out.contains("wasm agrees with native"), "{out}");
    assert!(
        out.contains("tokenizers in wasm agree with native"),
        "{out}"
    );
    let skipped = if otel.is_some() { 0 } else { OTEL_TESTS };
    assert!(
        out.contains("ℹ fail 0") && out.contains(&format!("ℹ skipped {skipped}\n")),
        "{out}"
    );
    for name in [
        "events per level: 6 at stages, 7 at exclusions, 9 at full",
        "policy sensitivity: variants with their reports, diffs by index",
        "a policy document's text (with its tokenizer)",
    ] {
        assert!(out.contains(name), "the node tests lack {name:?}");
    }
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
    for f in EXAMPLES.iter().chain(&[
        "index.js",
        "index.d.ts",
        "cupel.wasm",
        "LICENSE-vocabularies.txt",
        "README.md",
        "package.json",
    ]) {
        assert!(installed.join(f).exists(), "the package lacks {f}");
    }
    assert!(
        !installed.join("test").exists(),
        "the package ships its tests"
    );
    assert!(
        !installed.join("node_modules").exists(),
        "npm installed a dependency: the package has none (its peer dependency is optional)"
    );

    // The README's examples, in its order (the one-call path first): each
    // block is the file the package ships, and prints what the README shows.
    let mut at = 0;
    for f in EXAMPLES {
        let marker = format!("<!-- example: {f}");
        let found = readme
            .find(&marker)
            .unwrap_or_else(|| panic!("README: no example {f}"));
        assert!(found > at, "README: {f} is out of order");
        at = found;
        let code = block_after(&readme, &marker);
        assert_eq!(
            code,
            std::fs::read_to_string(installed.join(f)).unwrap(),
            "the README's {f} and the package's differ"
        );
        if f == "otel.mjs" {
            // The pinned OpenTelemetry packages, linked in beside libcupel:
            // it imports @opentelemetry/api as a host's would.
            let Some(modules) = otel_modules() else {
                eprintln!("*** SKIPPED: otel.mjs (no OpenTelemetry install) ***");
                continue;
            };
            let link = project.join("node_modules/@opentelemetry");
            if !link.exists() {
                std::os::unix::fs::symlink(modules.join("@opentelemetry"), &link).unwrap();
            }
        }
        std::fs::write(project.join(f), code).unwrap();
        let out = common::run(
            Command::new("node").arg(f).current_dir(&project),
            &format!("the README's {f}"),
        );
        print!("{out}");
        assert_eq!(
            out,
            block_after(&readme, &format!("<!-- output: {f} -->")),
            "the README's output of {f}"
        );
    }
    // The README's first example is example.mjs, the one-call path.
    let first_js = readme.find("```js").unwrap();
    assert!(
        readme[..first_js].contains("<!-- example: example.mjs"),
        "the README's first example is example.mjs"
    );
    assert!(
        block_after(&readme, "<!-- example: example.mjs").contains("cupel.select("),
        "the first example is the one-call path"
    );
    for heading in [
        "## Counting tokens",
        "## Items that shrink",
        "## Sessions",
        "## Policies from JSON",
        "## Presets",
        "## Policy sensitivity",
        "## Analytics",
        "## Tracing",
        "## OpenTelemetry",
    ] {
        assert!(readme.contains(heading), "README: no {heading}");
    }
    assert!(
        readme.contains("performance.timeOrigin + performance.now()"),
        "the README says how spans are timed"
    );
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
