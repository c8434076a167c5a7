//! Runs every conformance vector of ../shared/conformance/slicing through
//! the C ABI (the extern "C" functions, called from Rust).

use cupel::ffi::*;
use std::collections::BTreeSet;
use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::ptr;
use toml::Value;

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/slicing")
}

fn last_error() -> String {
    let p = cupel_last_error();
    if p.is_null() {
        return "(none)".into();
    }
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[track_caller]
fn ok(status: cupel_status) {
    assert_eq!(status, CUPEL_OK, "{}", last_error());
}

fn scarcity(config: &Value) -> i32 {
    match config
        .get("scarcity_behavior")
        .and_then(Value::as_str)
        .unwrap_or("degrade")
    {
        "degrade" => CUPEL_SCARCITY_DEGRADE as i32,
        "error" => CUPEL_SCARCITY_ERROR as i32,
        other => panic!("unknown scarcity_behavior {other}"),
    }
}

fn bucket(config: &Value) -> i64 {
    config
        .get("bucket_size")
        .and_then(Value::as_integer)
        .unwrap_or(100)
}

/// Builds the slicer a vector describes.
unsafe fn build_slicer(name: &str, config: &Value, kinds: &mut Vec<CString>) -> *mut cupel_slicer {
    let mut s = ptr::null_mut();
    let inner_of = |config: &Value| -> *mut cupel_slicer {
        let mut s = ptr::null_mut();
        match config
            .get("inner_slicer")
            .and_then(Value::as_str)
            .unwrap_or("greedy")
        {
            "greedy" => ok(cupel_slicer_new_greedy(&mut s)),
            "knapsack" => ok(cupel_slicer_new_knapsack(bucket(config), &mut s)),
            other => panic!("unknown inner slicer {other}"),
        }
        s
    };
    let mut cstr = |v: &Value| -> *const std::ffi::c_char {
        kinds.push(CString::new(v.as_str().unwrap()).unwrap());
        kinds.last().unwrap().as_ptr()
    };
    let count_entries = |config: &Value,
                         cstr: &mut dyn FnMut(&Value) -> *const std::ffi::c_char|
     -> Vec<cupel_count_quota> {
        config
            .get("entries")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|e| cupel_count_quota {
                        kind: cstr(&e["kind"]),
                        require_count: e["require_count"].as_integer().unwrap() as u32,
                        cap_count: e["cap_count"].as_integer().unwrap() as u32,
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    match name {
        "greedy" => ok(cupel_slicer_new_greedy(&mut s)),
        "knapsack" => ok(cupel_slicer_new_knapsack(bucket(config), &mut s)),
        "quota" => {
            let quotas: Vec<cupel_quota> = config
                .get("quotas")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|q| cupel_quota {
                            kind: cstr(&q["kind"]),
                            require_percent: q["require"].as_float().unwrap(),
                            cap_percent: q["cap"].as_float().unwrap(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let inner = inner_of(config);
            ok(cupel_slicer_new_quota(
                inner,
                quotas.as_ptr(),
                quotas.len(),
                &mut s,
            ));
            cupel_slicer_free(inner);
        }
        "count_quota" => {
            let entries = count_entries(config, &mut cstr);
            let inner = inner_of(config);
            ok(cupel_slicer_new_count_quota(
                inner,
                entries.as_ptr(),
                entries.len(),
                scarcity(config),
                &mut s,
            ));
            cupel_slicer_free(inner);
        }
        "count_constrained_knapsack" => {
            let entries = count_entries(config, &mut cstr);
            ok(cupel_slicer_new_count_constrained_knapsack(
                bucket(config),
                entries.as_ptr(),
                entries.len(),
                scarcity(config),
                &mut s,
            ));
        }
        other => panic!("unknown slicer {other}"),
    }
    s
}

unsafe fn run_vector(path: &PathBuf) {
    let text = std::fs::read_to_string(path).unwrap();
    let v: Value = text.parse().unwrap();
    let name = path.file_name().unwrap().to_string_lossy();
    let slicer_name = v["test"]["slicer"].as_str().unwrap();
    let empty = Value::Table(Default::default());
    let config = v.get("config").unwrap_or(&empty);
    let mut kinds = Vec::new();
    let slicer = build_slicer(slicer_name, config, &mut kinds);

    let mut items = ptr::null_mut();
    ok(cupel_items_new(&mut items));
    let scored = v["scored_items"].as_array().unwrap();
    let mut contents = Vec::new();
    for it in scored {
        let kind = it
            .get("kind")
            .map(|k| CString::new(k.as_str().unwrap()).unwrap());
        ok(cupel_items_push(
            items,
            it["tokens"].as_integer().unwrap(),
            it["score"].as_float().unwrap(),
            kind.as_ref().map_or(ptr::null(), |k| k.as_ptr()),
        ));
        contents.push(it["content"].as_str().unwrap().to_string());
    }
    let target = v["budget"]["target_tokens"].as_integer().unwrap();
    let max = v["budget"]
        .get("max_tokens")
        .and_then(Value::as_integer)
        .unwrap_or(target);
    let mut budget = ptr::null_mut();
    ok(cupel_budget_new(max, target, &mut budget));
    let mut report = ptr::null_mut();
    ok(cupel_report_new(&mut report));

    let mut out = vec![usize::MAX; scored.len()];
    let mut n = 0;
    ok(cupel_slice(
        slicer,
        items,
        budget,
        0,
        out.as_mut_ptr(),
        out.len(),
        &mut n,
        report,
    ));
    let got: BTreeSet<&str> = out[..n].iter().map(|&i| contents[i].as_str()).collect();
    assert_eq!(got.len(), n, "{name}: duplicate indices {:?}", &out[..n]);
    let want: BTreeSet<&str> = v["expected"]["selected_contents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(got, want, "{name}: selected set");
    if let Some(c) = v["expected"].get("shortfall_count") {
        assert_eq!(
            cupel_report_shortfall_count(report) as i64,
            c.as_integer().unwrap(),
            "{name}: shortfalls"
        );
    }
    if let Some(c) = v["expected"].get("cap_excluded_count") {
        assert_eq!(
            cupel_report_cap_excluded_count(report) as i64,
            c.as_integer().unwrap(),
            "{name}: cap exclusions"
        );
    }
    let tokens: i64 = out[..n]
        .iter()
        .map(|&i| scored[i]["tokens"].as_integer().unwrap())
        .sum();
    assert_eq!(
        cupel_report_selected_tokens(report),
        tokens,
        "{name}: selected tokens"
    );

    cupel_report_free(report);
    cupel_budget_free(budget);
    cupel_items_free(items);
    cupel_slicer_free(slicer);
}

#[test]
fn every_conformance_vector_passes_through_the_abi() {
    let dir = vectors_dir();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("conformance vectors not found at {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 15,
        "expected the 15 vectors of the five slicers, found {}",
        paths.len()
    );
    let mut seen = BTreeSet::new();
    for p in &paths {
        let v: Value = std::fs::read_to_string(p).unwrap().parse().unwrap();
        seen.insert(v["test"]["slicer"].as_str().unwrap().to_string());
        unsafe { run_vector(p) };
    }
    let want: BTreeSet<String> = [
        "greedy",
        "knapsack",
        "quota",
        "count_quota",
        "count_constrained_knapsack",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(seen, want, "every slicer has vectors");
}
