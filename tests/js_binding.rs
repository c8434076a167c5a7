//! The JavaScript binding over the WebAssembly build (bindings/js): builds
//! cupel.wasm, writes seeded random pipelines (every scorer, slicer,
//! placer, overflow strategy, groups) with what the native library makes of
//! them, and runs `node --test`, which checks its own cases and that the
//! WebAssembly build places the same items for the same reasons. Then
//! `npm pack`, an install of the tarball into a scratch directory (no
//! network: the package has no dependencies) and its example, run there.

mod common;

#[path = "../fuzz/src/pipeline_ref.rs"]
mod pipeline_ref;

#[path = "common/cases.rs"]
mod cases;

use std::process::Command;

use common::Rng;
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

#[test]
fn node_tests_pass_and_wasm_agrees_with_native() {
    if !common::have_toolchain("node", "Debian's nodejs") || !have_wasm_target() {
        return;
    }
    build_wasm();
    let dir = common::out_dir("js_binding");
    let cases = dir.join("cross_cases.json");
    std::fs::write(&cases, cross_cases().to_string()).unwrap();
    let root = common::root();
    let out = common::run(
        Command::new("node")
            .args(["--test", "--test-reporter=spec", "bindings/js/test/"])
            .current_dir(&root)
            .env("CUPEL_CROSS_CASES", &cases),
        "node --test",
    );
    print!("{out}");
    assert!(out.contains("wasm agrees with native"), "{out}");
    assert!(
        out.contains("ℹ fail 0") && out.contains("ℹ skipped 0"),
        "{out}"
    );
}

#[test]
fn npm_pack_installs_and_its_example_runs() {
    if !common::have_toolchain("node", "Debian's nodejs")
        || !common::have_toolchain("npm", "Debian's npm")
        || !have_wasm_target()
    {
        return;
    }
    build_wasm();
    let root = common::root();
    let dir = common::out_dir("js_pack");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scratch")).unwrap();
    let packed = common::run(
        Command::new("npm")
            .args(["pack", "--pack-destination"])
            .arg(&dir)
            .current_dir(root.join("bindings/js")),
        "npm pack",
    );
    let tgz = dir.join(packed.lines().last().unwrap().trim());
    assert!(tgz.exists(), "npm pack printed {packed}");
    common::run(
        Command::new("npm")
            .args(["install", "--offline", "--no-audit", "--no-fund"])
            .arg(&tgz)
            .current_dir(dir.join("scratch")),
        "npm install",
    );
    let installed = dir.join("scratch/node_modules/libcupel");
    for f in [
        "index.js",
        "index.d.ts",
        "cupel.wasm",
        "example.mjs",
        "README.md",
    ] {
        assert!(installed.join(f).exists(), "the package lacks {f}");
    }
    let out = common::run(
        Command::new("node")
            .arg("node_modules/libcupel/example.mjs")
            .current_dir(dir.join("scratch")),
        "the packed example",
    );
    print!("{out}");
    assert!(out.contains("tool call/result pairs split: 0"), "{out}");
}
