//! Runs every conformance vector of ../shared/conformance (slicing,
//! scoring, placing, pipeline, diagnostics expectations included) through
//! the C ABI (the extern "C" functions, called from Rust), and fails if any
//! vector file is skipped.

use cupel::ffi::*;
use std::collections::BTreeSet;
use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::ptr;
use toml::Value;

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance")
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

unsafe fn run_slicing(v: &Value, name: &str) {
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

/// Days from 1970-01-01 to a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A TOML datetime (UTC) as milliseconds since the epoch.
fn unix_millis(v: &Value) -> i64 {
    let dt = v.as_datetime().expect("a datetime");
    let date = dt.date.expect("a date");
    let time = dt.time.expect("a time");
    let days = days_from_civil(date.year as i64, date.month as i64, date.day as i64);
    let secs =
        days * 86_400 + time.hour as i64 * 3600 + time.minute as i64 * 60 + time.second as i64;
    secs * 1000 + time.nanosecond as i64 / 1_000_000
}

fn cstring(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// Pushes `list` (the vector's items) with every field it has; `score`
/// from each entry when present. Returns the handle and the contents.
unsafe fn push_items(list: &[Value]) -> (*mut cupel_items, Vec<String>) {
    let mut items = ptr::null_mut();
    ok(cupel_items_new(&mut items));
    let mut contents = Vec::new();
    for (i, it) in list.iter().enumerate() {
        let kind = it.get("kind").map(|k| cstring(k.as_str().unwrap()));
        let score = it.get("score").and_then(Value::as_float).unwrap_or(0.0);
        ok(cupel_items_push(
            items,
            it.get("tokens").and_then(Value::as_integer).unwrap_or(0),
            score,
            kind.as_ref().map_or(ptr::null(), |k| k.as_ptr()),
        ));
        let content = it["content"].as_str().unwrap();
        ok(cupel_items_set_content(items, i, cstring(content).as_ptr()));
        contents.push(content.to_string());
        if let Some(t) = it.get("timestamp") {
            ok(cupel_items_set_timestamp(items, i, unix_millis(t)));
        }
        if let Some(p) = it.get("priority") {
            ok(cupel_items_set_priority(items, i, p.as_integer().unwrap()));
        }
        if let Some(h) = it.get("futureRelevanceHint") {
            ok(cupel_items_set_relevance_hint(
                items,
                i,
                h.as_float().unwrap(),
            ));
        }
        if let Some(p) = it.get("pinned") {
            ok(cupel_items_set_pinned(items, i, p.as_bool().unwrap()));
        }
        for tag in it
            .get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            ok(cupel_items_add_tag(
                items,
                i,
                cstring(tag.as_str().unwrap()).as_ptr(),
            ));
        }
        for (k, val) in it
            .get("metadata")
            .and_then(Value::as_table)
            .into_iter()
            .flatten()
        {
            let val = cstring(val.as_str().unwrap());
            ok(cupel_items_set_metadata(
                items,
                i,
                cstring(k).as_ptr(),
                val.as_ptr(),
            ));
        }
    }
    (items, contents)
}

/// The `name` strings and weights of `[[config.<list>]]` entries, the
/// strings kept alive for the call.
fn named_weights(list: &[Value], name: &str) -> (Vec<CString>, Vec<f64>) {
    list.iter()
        .map(|w| {
            (
                cstring(w[name].as_str().unwrap()),
                w["weight"].as_float().unwrap(),
            )
        })
        .unzip()
}

/// Builds the scorer `name` with `config`; the status when it is refused.
unsafe fn build_scorer(name: &str, config: &Value) -> Result<*mut cupel_scorer, cupel_status> {
    let mut s = ptr::null_mut();
    let status = match name {
        "recency" => cupel_scorer_new_recency(&mut s),
        "priority" => cupel_scorer_new_priority(&mut s),
        "frequency" => cupel_scorer_new_frequency(&mut s),
        "reflexive" => cupel_scorer_new_reflexive(&mut s),
        "kind" => {
            let custom = config.get("weights").and_then(Value::as_array);
            let use_default = config.get("use_default_weights").and_then(Value::as_bool);
            match (custom, use_default) {
                (Some(list), Some(false) | None) => {
                    let (kinds, w) = named_weights(list, "kind");
                    let weights: Vec<cupel_kind_weight> = (kinds.iter().zip(&w))
                        .map(|(k, &weight)| cupel_kind_weight {
                            kind: k.as_ptr(),
                            weight,
                        })
                        .collect();
                    cupel_scorer_new_kind(weights.as_ptr(), weights.len(), &mut s)
                }
                _ => cupel_scorer_new_kind(ptr::null(), 0, &mut s),
            }
        }
        "tag" => {
            let list = config.get("tag_weights").and_then(Value::as_array);
            let (tags, w) = named_weights(list.map_or(&[][..], |l| l.as_slice()), "tag");
            let weights: Vec<cupel_tag_weight> = (tags.iter().zip(&w))
                .map(|(t, &weight)| cupel_tag_weight {
                    tag: t.as_ptr(),
                    weight,
                })
                .collect();
            cupel_scorer_new_tag(weights.as_ptr(), weights.len(), &mut s)
        }
        "composite" => return composite(config["scorers"].as_array().unwrap()),
        "scaled" => {
            let empty = Value::Table(Default::default());
            let inner = build_scorer(config["inner_scorer"].as_str().unwrap(), &empty)?;
            let status = cupel_scorer_new_scaled(inner, &mut s);
            cupel_scorer_free(inner);
            status
        }
        "metadata_trust" => cupel_scorer_new_metadata_trust(
            config
                .get("default_score")
                .and_then(Value::as_float)
                .unwrap_or(0.5),
            &mut s,
        ),
        "metadata_key" => cupel_scorer_new_metadata_key(
            cstring(config["key"].as_str().unwrap()).as_ptr(),
            cstring(config["value"].as_str().unwrap()).as_ptr(),
            config["boost"].as_float().unwrap(),
            &mut s,
        ),
        "decay" => {
            let curve = &config["curve"];
            let reference = unix_millis(&config["reference_time"]);
            let null_score = config
                .get("null_timestamp_score")
                .and_then(Value::as_float)
                .unwrap_or(0.5);
            let windows: Vec<cupel_decay_window> = curve
                .get("windows")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|w| cupel_decay_window {
                    max_age_secs: w["max_age_secs"].as_float().unwrap(),
                    score: w["score"].as_float().unwrap(),
                })
                .collect();
            let (kind, duration) = match curve["type"].as_str().unwrap() {
                "exponential" => (
                    CUPEL_DECAY_EXPONENTIAL,
                    curve["half_life_secs"].as_float().unwrap(),
                ),
                "window" => (
                    CUPEL_DECAY_WINDOW,
                    curve["max_age_secs"].as_float().unwrap(),
                ),
                "step" => (CUPEL_DECAY_STEP, 0.0),
                other => panic!("unknown curve {other}"),
            };
            cupel_scorer_new_decay(
                kind as i32,
                duration,
                windows.as_ptr(),
                windows.len(),
                reference,
                null_score,
                &mut s,
            )
        }
        other => panic!("unknown scorer {other}"),
    };
    if status == CUPEL_OK {
        Ok(s)
    } else {
        Err(status)
    }
}

/// A composite of `[[config.scorers]]` entries (type, weight); a single
/// entry is that scorer itself.
unsafe fn composite(entries: &[Value]) -> Result<*mut cupel_scorer, cupel_status> {
    let empty = Value::Table(Default::default());
    let children: Vec<*mut cupel_scorer> = entries
        .iter()
        .map(|e| build_scorer(e["type"].as_str().unwrap(), &empty))
        .collect::<Result<_, _>>()?;
    if children.len() == 1 {
        return Ok(children[0]);
    }
    let weights: Vec<f64> = entries
        .iter()
        .map(|e| e["weight"].as_float().unwrap())
        .collect();
    let consts: Vec<*const cupel_scorer> = children.iter().map(|&c| c as *const _).collect();
    let mut s = ptr::null_mut();
    let status =
        cupel_scorer_new_composite(consts.as_ptr(), weights.as_ptr(), consts.len(), &mut s);
    for c in children {
        cupel_scorer_free(c);
    }
    if status == CUPEL_OK {
        Ok(s)
    } else {
        Err(status)
    }
}

fn epsilon(v: &Value) -> f64 {
    v.get("tolerance")
        .and_then(|t| t.get("score_epsilon"))
        .and_then(Value::as_float)
        .unwrap_or(1e-9)
}

unsafe fn run_scoring(v: &Value, name: &str) {
    let empty = Value::Table(Default::default());
    let config = v.get("config").unwrap_or(&empty);
    let scorer_name = v["test"]["scorer"].as_str().unwrap();
    let built = build_scorer(scorer_name, config);
    if v["test"]
        .get("expect_construction_error")
        .and_then(Value::as_bool)
        == Some(true)
    {
        let status = built.expect_err(name);
        assert_eq!(
            status,
            CUPEL_ERROR_INVALID_ARGUMENT,
            "{name}: {}",
            last_error()
        );
        return;
    }
    let scorer = built.unwrap_or_else(|s| panic!("{name}: {s:?} {}", last_error()));
    let (items, contents) = push_items(v["items"].as_array().unwrap());
    let mut scores = vec![f64::NAN; contents.len()];
    let mut n = 0;
    ok(cupel_scorer_score(
        scorer,
        items,
        scores.as_mut_ptr(),
        scores.len(),
        &mut n,
    ));
    assert_eq!(n, contents.len(), "{name}");
    let eps = epsilon(v);
    for e in v["expected"].as_array().unwrap() {
        let c = e["content"].as_str().unwrap();
        let i = contents.iter().position(|x| x == c).unwrap();
        let want = e["score_approx"].as_float().unwrap();
        assert!(
            (scores[i] - want).abs() < eps,
            "{name}: {c} scored {}, want {want}",
            scores[i]
        );
    }
    cupel_items_free(items);
    cupel_scorer_free(scorer);
}

unsafe fn run_placing(v: &Value, name: &str) {
    let list = v["items"].as_array().unwrap();
    let (items, contents) = push_items(list);
    let mut p = ptr::null_mut();
    match v["test"]["placer"].as_str().unwrap() {
        "chronological" => ok(cupel_placer_new_chronological(&mut p)),
        "u-shaped" => ok(cupel_placer_new_u_shaped(&mut p)),
        other => panic!("unknown placer {other}"),
    }
    let indices: Vec<usize> = (0..list.len()).collect();
    let scores: Vec<f64> = list
        .iter()
        .map(|i| i["score"].as_float().unwrap())
        .collect();
    let mut out = vec![usize::MAX; list.len()];
    let mut n = 0;
    ok(cupel_placer_place(
        p,
        items,
        indices.as_ptr(),
        scores.as_ptr(),
        indices.len(),
        out.as_mut_ptr(),
        out.len(),
        &mut n,
    ));
    let got: Vec<&str> = out[..n].iter().map(|&i| contents[i].as_str()).collect();
    let want: Vec<&str> = v["expected"]["ordered_contents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(got, want, "{name}: placed order");
    cupel_placer_free(p);
    cupel_items_free(items);
}

fn reason_name(r: i32) -> &'static str {
    const NAMES: [(cupel_reason, &str); 12] = [
        (cupel_reason::CUPEL_REASON_SCORED, "Scored"),
        (cupel_reason::CUPEL_REASON_PINNED, "Pinned"),
        (cupel_reason::CUPEL_REASON_ZERO_TOKEN, "ZeroToken"),
        (cupel_reason::CUPEL_REASON_BUDGET_EXCEEDED, "BudgetExceeded"),
        (cupel_reason::CUPEL_REASON_SCORED_TOO_LOW, "ScoredTooLow"),
        (cupel_reason::CUPEL_REASON_DEDUPLICATED, "Deduplicated"),
        (
            cupel_reason::CUPEL_REASON_QUOTA_CAP_EXCEEDED,
            "QuotaCapExceeded",
        ),
        (
            cupel_reason::CUPEL_REASON_QUOTA_REQUIRE_DISPLACED,
            "QuotaRequireDisplaced",
        ),
        (cupel_reason::CUPEL_REASON_NEGATIVE_TOKENS, "NegativeTokens"),
        (cupel_reason::CUPEL_REASON_PINNED_OVERRIDE, "PinnedOverride"),
        (cupel_reason::CUPEL_REASON_FILTERED, "Filtered"),
        (
            cupel_reason::CUPEL_REASON_COUNT_CAP_EXCEEDED,
            "CountCapExceeded",
        ),
    ];
    NAMES
        .iter()
        .find(|(c, _)| *c as i32 == r)
        .map(|(_, n)| *n)
        .unwrap_or_else(|| panic!("unknown reason {r}"))
}

unsafe fn run_pipeline(v: &Value, name: &str) {
    let config = &v["config"];
    let list = v["items"].as_array().unwrap();
    let (items, contents) = push_items(list);
    let scorer = composite(config["scorers"].as_array().unwrap()).expect(name);
    let slicer = build_slicer(config["slicer"].as_str().unwrap(), config, &mut Vec::new());
    let mut placer = ptr::null_mut();
    match config["placer"].as_str().unwrap() {
        "chronological" => ok(cupel_placer_new_chronological(&mut placer)),
        "u-shaped" => ok(cupel_placer_new_u_shaped(&mut placer)),
        other => panic!("unknown placer {other}"),
    }
    let mut pipeline = ptr::null_mut();
    ok(cupel_pipeline_new(scorer, slicer, placer, &mut pipeline));
    let dedup = config
        .get("deduplication")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    ok(cupel_pipeline_set_deduplication(pipeline, dedup));
    let overflow = match config
        .get("overflow_strategy")
        .and_then(Value::as_str)
        .unwrap_or("throw")
    {
        "throw" => CUPEL_OVERFLOW_THROW,
        "truncate" => CUPEL_OVERFLOW_TRUNCATE,
        "proceed" => CUPEL_OVERFLOW_PROCEED,
        other => panic!("unknown overflow strategy {other}"),
    };
    ok(cupel_pipeline_set_overflow(pipeline, overflow as i32));
    let b = &v["budget"];
    let target = b["target_tokens"].as_integer().unwrap();
    let max = b
        .get("max_tokens")
        .and_then(Value::as_integer)
        .unwrap_or(target);
    let mut budget = ptr::null_mut();
    ok(cupel_budget_new(max, target, &mut budget));
    if let Some(r) = b.get("output_reserve").and_then(Value::as_integer) {
        ok(cupel_budget_set_output_reserve(budget, r));
    }
    let mut report = ptr::null_mut();
    ok(cupel_report_new(&mut report));
    let mut out = vec![usize::MAX; list.len()];
    let mut n = 0;
    ok(cupel_pipeline_run(
        pipeline,
        items,
        budget,
        out.as_mut_ptr(),
        out.len(),
        &mut n,
        report,
    ));
    let got: Vec<&str> = out[..n].iter().map(|&i| contents[i].as_str()).collect();
    let want: Vec<&str> = v["expected_output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["content"].as_str().unwrap())
        .collect();
    assert_eq!(got, want, "{name}: placed output");
    // Every item is in the report once; the JSON says the same.
    let inc = cupel_report_included_count(report);
    let exc = cupel_report_excluded_count(report);
    assert_eq!(inc + exc, list.len(), "{name}: every item decided");
    assert_eq!(cupel_report_total_candidates(report), list.len() as i64);
    let decision = |included: bool, i: usize| {
        let mut d = std::mem::zeroed::<cupel_decision>();
        if included {
            ok(cupel_report_included(report, i, &mut d));
        } else {
            ok(cupel_report_excluded(report, i, &mut d));
        }
        d
    };
    assert_eq!(inc, n, "{name}: included = placed");
    for (i, &placed) in out[..n].iter().enumerate() {
        let d = decision(true, i);
        assert_eq!(d.item_index, placed, "{name}: included in placed order");
    }
    let eps = epsilon(v);
    let diagnostics = v.get("expected").and_then(|e| e.get("diagnostics"));
    if let Some(d) = diagnostics {
        if let Some(list) = d.get("included").and_then(Value::as_array) {
            assert_eq!(list.len(), inc, "{name}: included count");
            for (k, e) in list.iter().enumerate() {
                let got = decision(true, k);
                assert_eq!(
                    contents[got.item_index],
                    e["content"].as_str().unwrap(),
                    "{name}"
                );
                let want = e["score_approx"].as_float().unwrap();
                assert!(
                    (got.score - want).abs() < eps,
                    "{name}: included {k} score {}",
                    got.score
                );
                assert_eq!(
                    reason_name(got.reason),
                    e["inclusion_reason"].as_str().unwrap(),
                    "{name}"
                );
            }
        }
        if let Some(list) = d.get("excluded").and_then(Value::as_array) {
            assert_eq!(list.len(), exc, "{name}: excluded count");
            for (k, e) in list.iter().enumerate() {
                let got = decision(false, k);
                let who = &contents[got.item_index];
                assert_eq!(who, e["content"].as_str().unwrap(), "{name}: excluded {k}");
                let want = e["score_approx"].as_float().unwrap();
                assert!(
                    (got.score - want).abs() < eps,
                    "{name}: {who} score {}",
                    got.score
                );
                assert_eq!(
                    reason_name(got.reason),
                    e["exclusion_reason"].as_str().unwrap(),
                    "{name}: {who}"
                );
                if let Some(t) = e.get("item_tokens") {
                    assert_eq!(
                        got.item_tokens,
                        t.as_integer().unwrap(),
                        "{name}: {who} item_tokens"
                    );
                }
                if let Some(t) = e.get("available_tokens") {
                    assert_eq!(
                        got.available_tokens,
                        t.as_integer().unwrap(),
                        "{name}: {who} available"
                    );
                }
                for key in ["deduplicated_against", "displaced_by"] {
                    if let Some(c) = e.get(key) {
                        assert_eq!(
                            &contents[got.related_index],
                            c.as_str().unwrap(),
                            "{name}: {who} {key}"
                        );
                    }
                }
            }
        }
        if let Some(s) = d.get("summary") {
            if let Some(t) = s.get("total_candidates") {
                assert_eq!(
                    cupel_report_total_candidates(report),
                    t.as_integer().unwrap(),
                    "{name}"
                );
            }
            if let Some(t) = s.get("total_tokens_considered") {
                assert_eq!(
                    cupel_report_total_tokens_considered(report),
                    t.as_integer().unwrap(),
                    "{name}"
                );
            }
        }
    }
    // The JSON wire format carries the same lists.
    let mut len = 0;
    assert_eq!(
        cupel_report_json(report, items, ptr::null_mut(), 0, &mut len),
        CUPEL_ERROR_BUFFER_TOO_SMALL
    );
    let mut buf = vec![0 as std::ffi::c_char; len + 1];
    ok(cupel_report_json(
        report,
        items,
        buf.as_mut_ptr(),
        buf.len(),
        &mut len,
    ));
    let text = CStr::from_ptr(buf.as_ptr()).to_str().unwrap();
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    let names = |key: &str| -> Vec<String> {
        json[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["item"]["content"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("included"), got, "{name}: JSON included");
    assert_eq!(names("excluded").len(), exc, "{name}: JSON excluded");
    assert_eq!(json["total_candidates"], list.len(), "{name}");
    cupel_report_free(report);
    cupel_budget_free(budget);
    cupel_pipeline_free(pipeline);
    cupel_placer_free(placer);
    cupel_slicer_free(slicer);
    cupel_scorer_free(scorer);
    cupel_items_free(items);
}

#[test]
fn every_conformance_vector_passes_through_the_abi() {
    let root = vectors_dir();
    let mut ran = std::collections::BTreeMap::<String, usize>::new();
    let mut slicers = BTreeSet::new();
    for stage in ["slicing", "scoring", "placing", "pipeline"] {
        let dir = root.join(stage);
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("conformance vectors not found at {}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for p in &paths {
            assert!(
                p.extension().is_some_and(|x| x == "toml"),
                "{} is not a vector: nothing may be skipped",
                p.display()
            );
            let v: Value = std::fs::read_to_string(p).unwrap().parse().unwrap();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            assert_eq!(v["test"]["stage"].as_str(), Some(stage), "{name}");
            unsafe {
                match stage {
                    "slicing" => {
                        slicers.insert(v["test"]["slicer"].as_str().unwrap().to_string());
                        run_slicing(&v, &name)
                    }
                    "scoring" => run_scoring(&v, &name),
                    "placing" => run_placing(&v, &name),
                    _ => run_pipeline(&v, &name),
                }
            }
            *ran.entry(stage.to_string()).or_default() += 1;
        }
    }
    let total: usize = ran.values().sum();
    println!("conformance vectors run through the C ABI: {total} ({ran:?})");
    assert_eq!(
        total, 58,
        "the specification's 58 required vectors: {ran:?}"
    );
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
    assert_eq!(slicers, want, "every slicer has vectors");
}
