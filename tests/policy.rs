//! Policies as data (issue 29, `../shared/abi-policy.md`, docs/policies.md):
//! every validation rule of the policy and budget formats (each a failing
//! document with its JSON path), the case rules, round trips of every
//! scorer, slicer, placer and quota form on random pipelines (the same
//! selection, the same text written again, and every written document
//! valid against schema/policy.schema.json), the presets against their
//! table, policy sensitivity on duplicate contents, the analytics' edge
//! cases, and the trace's events per level.

use std::sync::{Arc, Mutex};

use cupel::analytics;
use cupel::pipeline::{Engine, Overflow, Pipeline, Reason, Report};
use cupel::placer::Placer;
use cupel::policy::{self, presets};
use cupel::scorer::{Curve, Decay, Scorer};
use cupel::testing::Rng;
use cupel::trace::{Hook, Kind, Level};
use cupel::{Budget, CountEntry, CountQuota, Items, Knapsack, NewItem, Quota, QuotaEntry};
use cupel::{Scarcity, Slicer};

fn read(doc: &str) -> cupel::Result<Pipeline> {
    policy::pipeline_from_json(doc.as_bytes())
}

fn write(p: &Pipeline) -> String {
    policy::pipeline_to_json(p).expect("the pipeline can be written")
}

/// `doc` fails with an invalid-argument message holding every part.
fn fails(doc: &str, parts: &[&str]) {
    match read(doc) {
        Ok(p) => panic!("{doc} was read: {}", write(&p)),
        Err(cupel::Error::InvalidArgument(m)) => {
            for part in parts {
                assert!(m.contains(part), "{doc}: message {m:?} lacks {part:?}");
            }
        }
        Err(e) => panic!("{doc}: {e:?} is not InvalidArgument"),
    }
}

const R: &str = r#"{"type":"recency","weight":1}"#;

/// A document with `R` as its scorers and `rest` added at the top level.
fn with(rest: &str) -> String {
    if rest.is_empty() {
        format!(r#"{{"scorers":[{R}]}}"#)
    } else {
        format!(r#"{{"scorers":[{R}],{rest}}}"#)
    }
}

#[test]
fn every_validation_rule_names_its_path() {
    // The document as a whole.
    fails("", &["json is empty"]);
    fails("   \n", &["json is empty"]);
    fails("null", &["$:", "got null"]);
    fails("[1]", &["$:", "an array"]);
    fails("{\n  \"scorers\": [", &["malformed JSON at line 2 column"]);
    assert!(matches!(
        policy::pipeline_from_json(b"{\"name\": \"\xff\"}"),
        Err(cupel::Error::InvalidArgument(m)) if m.contains("invalid UTF-8 at byte 10")
    ));
    // Scorers.
    fails("{}", &["$.scorers: required"]);
    fails(r#"{"scorers":null}"#, &["$.scorers: required"]);
    fails(r#"{"scorers":[]}"#, &["$.scorers: must hold at least one"]);
    fails(r#"{"scorers":{}}"#, &["$.scorers: expected an array"]);
    fails(r#"{"scorers":[3]}"#, &["$.scorers[0]: expected an object"]);
    fails(
        r#"{"scorers":[{"weight":1}]}"#,
        &["$.scorers[0].type: required", "recency"],
    );
    fails(
        &format!(r#"{{"scorers":[{R},{{"type":"nope","weight":1}}]}}"#),
        &[
            "$.scorers[1].type: unknown scorer type \"nope\"",
            "recency, priority, kind, tag, frequency, reflexive, scaled",
        ],
    );
    fails(
        r#"{"scorers":[{"type":"recency"}]}"#,
        &["$.scorers[0].weight: required"],
    );
    fails(
        &format!(r#"{{"scorers":[{R},{{"type":"kind","weight":-0.5}}]}}"#),
        &["$.scorers[1].weight: must be positive and finite (got -0.5)"],
    );
    fails(
        r#"{"scorers":[{"type":"recency","weight":0}]}"#,
        &["$.scorers[0].weight: must be positive"],
    );
    fails(
        r#"{"scorers":[{"type":"recency","weight":"1"}]}"#,
        &["$.scorers[0].weight: expected a number"],
    );
    fails(
        r#"{"scorers":[{"type":"recency","weight":1e999}]}"#,
        &["malformed JSON"],
    );
    fails(
        &format!(r#"{{"scorers":[{{"type":"recency","weight":1,"innerScorer":{R}}}]}}"#),
        &["$.scorers[0].innerScorer: only valid when type is \"scaled\""],
    );
    fails(
        r#"{"scorers":[{"type":"scaled","weight":1}]}"#,
        &["$.scorers[0].innerScorer: required"],
    );
    fails(
        r#"{"scorers":[{"type":"scaled","weight":1,"innerScorer":{"type":"bad"}}]}"#,
        &["$.scorers[0].innerScorer.type: unknown scorer type"],
    );
    fails(
        r#"{"scorers":[{"type":"tag","weight":1}]}"#,
        &["$.scorers[0].tagWeights: required"],
    );
    fails(
        r#"{"scorers":[{"type":"tag","weight":1,"tagWeights":{"a":-1}}]}"#,
        &["$.scorers[0].tagWeights", "must be finite and >= 0"],
    );
    fails(
        r#"{"scorers":[{"type":"kind","weight":1,"kindWeights":[1]}]}"#,
        &["$.scorers[0].kindWeights: expected an object"],
    );
    fails(
        r#"{"scorers":[{"type":"kind","weight":1,"kindWeights":{"Message":1,"message":2}}]}"#,
        &["$.scorers[0].kindWeights", "configured twice"],
    );
    fails(
        r#"{"scorers":[{"type":"kind","weight":1,"kindWeights":{"Message":"x"}}]}"#,
        &["$.scorers[0].kindWeights.Message: expected a number"],
    );
    fails(
        r#"{"scorers":[{"type":"composite","weight":1,"scorers":[{"type":"recency","weight":-1}]}]}"#,
        &["$.scorers[0].scorers[0].weight: must be positive"],
    );
    fails(
        r#"{"scorers":[{"type":"decay","weight":1}]}"#,
        &["$.scorers[0].curve: required"],
    );
    fails(
        r#"{"scorers":[{"type":"decay","weight":1,"curve":"exponential","halfLifeSeconds":60}]}"#,
        &["$.scorers[0].referenceUnixMillis: required"],
    );
    fails(
        r#"{"scorers":[{"type":"decay","weight":1,"curve":"window","referenceUnixMillis":0}]}"#,
        &["$.scorers[0].maxAgeSeconds: required"],
    );
    fails(
        r#"{"scorers":[{"type":"decay","weight":1,"curve":"exponential","halfLifeSeconds":-1,"referenceUnixMillis":0}]}"#,
        &["$.scorers[0]", "half_life is -1"],
    );
    fails(
        r#"{"scorers":[{"type":"decay","weight":1,"curve":"step","windows":[{"maxAgeSeconds":1}],"referenceUnixMillis":0}]}"#,
        &["$.scorers[0].windows[0].score: required"],
    );
    fails(
        r#"{"scorers":[{"type":"metadataKey","weight":1,"key":"k","value":"v"}]}"#,
        &["$.scorers[0].boost: required"],
    );
    fails(
        r#"{"scorers":[{"type":"metadataTrust","weight":1,"defaultScore":2}]}"#,
        &["$.scorers[0].defaultScore", "[0, 1]"],
    );
    // Slicer, placer, flags.
    fails(
        &with(r#""slicerType":"best""#),
        &[
            "$.slicerType: unknown value \"best\"",
            "\"greedy\", \"knapsack\", \"stream\"",
        ],
    );
    fails(
        &with(r#""slicerType":3"#),
        &["$.slicerType: expected a string, got number 3"],
    );
    fails(
        &with(r#""placerType":"middle""#),
        &["$.placerType: unknown value"],
    );
    fails(
        &with(r#""overflowStrategy":"explode""#),
        &["$.overflowStrategy: unknown value"],
    );
    fails(
        &with(r#""deduplicationEnabled":"yes""#),
        &["$.deduplicationEnabled: expected true or false"],
    );
    fails(
        &with(r#""knapsackBucketSize":5"#),
        &["$.knapsackBucketSize: only valid when slicerType is \"knapsack\""],
    );
    fails(
        &with(r#""slicerType":"knapsack","knapsackBucketSize":0"#),
        &["$.knapsackBucketSize: must be an integer > 0 (got 0)"],
    );
    fails(
        &with(r#""slicerType":"knapsack","knapsackBucketSize":1.5"#),
        &["$.knapsackBucketSize: expected an integer"],
    );
    fails(
        &with(r#""streamBatchSize":5"#),
        &["$.streamBatchSize: only valid when slicerType is \"stream\""],
    );
    fails(
        &with(r#""slicerType":"stream","streamBatchSize":-2"#),
        &["$.streamBatchSize: must be an integer > 0 (got -2)"],
    );
    // Quotas.
    let q = |rows: &str| with(&format!(r#""quotas":[{rows}]"#));
    fails(
        &with(r#""slicerType":"stream","quotas":[{"kind":"Message","maxPercent":50}]"#),
        &["$.quotas: not valid when slicerType is \"stream\""],
    );
    fails(
        &q(r#"{"kind":"Message"}"#),
        &["$.quotas[0]: a quota needs minPercent, maxPercent or both"],
    );
    fails(
        &q(r#"{"kind":"Message","minPercent":80,"maxPercent":20}"#),
        &["$.quotas[0]: minPercent 80 exceeds maxPercent 20"],
    );
    fails(
        &q(r#"{"kind":"Message","minPercent":120}"#),
        &["$.quotas[0].minPercent: must be in [0, 100] (got 120)"],
    );
    fails(&q(r#"{"minPercent":10}"#), &["$.quotas[0].kind: required"]);
    fails(
        &q(r#"{"kind":"Message","minPercent":60},{"kind":"Document","minPercent":60}"#),
        &["$.quotas:", "sum to 120"],
    );
    fails(
        &q(r#"{"kind":"Message","minPercent":10},{"kind":"message","minPercent":10}"#),
        &["$.quotas:", "same kind"],
    );
    fails(&with(r#""quotas":{}"#), &["$.quotas: expected an array"]);
    // Our extensions.
    fails(
        &with(r#""tokenizer":"gpt2""#),
        &["$.tokenizer:", "no known encoding"],
    );
    fails(
        &with(r#""sessionSlack":1"#),
        &["$.sessionSlack: must be in [0, 1) (got 1)"],
    );
    fails(
        &with(r#""memoryLimitBytes":-1"#),
        &["$.memoryLimitBytes: must be an integer >= 0 (got -1)"],
    );
    fails(&with(r#""name":5"#), &["$.name: expected a string"]);
    fails(
        &with(r#""countQuotas":[{"kind":"Message","require":3,"cap":1}]"#),
        &["$.countQuotas:", "require_count 3 > cap_count 1"],
    );
    fails(
        &with(r#""countQuotas":[{"kind":"Message","require":-1}]"#),
        &["$.countQuotas[0].require: must be an integer in [0, 4294967295] (got -1)"],
    );
    fails(
        &with(r#""slicerType":"knapsack","countQuotas":[{"kind":"Message","require":1}]"#),
        &["$.countQuotas:", "countConstrainedKnapsack"],
    );
    fails(
        &with(r#""slicerType":"countConstrainedKnapsack""#),
        &["$.countQuotas: required when slicerType is \"countConstrainedKnapsack\""],
    );
    fails(
        &with(r#""scarcity":"throw""#),
        &["$.scarcity: only valid with countQuotas"],
    );
    fails(
        &with(
            r#""slicerType":"countConstrainedKnapsack","countQuotas":[{"kind":"Message","require":1}],"quotas":[{"kind":"Message","maxPercent":50}]"#,
        ),
        &["$.quotas: not valid when slicerType is \"countConstrainedKnapsack\""],
    );
}

#[test]
fn budget_documents_are_validated_with_paths() {
    let b = |doc: &str| policy::budget_from_json(doc.as_bytes());
    let msg = |doc: &str| match b(doc) {
        Err(cupel::Error::InvalidArgument(m)) => m,
        other => panic!("{doc}: {other:?}"),
    };
    assert!(msg(r#"{"targetTokens":1}"#).contains("$.maxTokens: required"));
    assert!(msg(r#"{"maxTokens":10}"#).contains("$.targetTokens: required"));
    assert!(msg(r#"{"maxTokens":100,"targetTokens":250}"#)
        .contains("$.targetTokens: 250 exceeds maxTokens 100"));
    assert!(
        msg(r#"{"maxTokens":-1,"targetTokens":0}"#).contains("$.maxTokens: must be >= 0 (got -1)")
    );
    assert!(msg(r#"{"maxTokens":1,"targetTokens":-2}"#)
        .contains("$.targetTokens: must be >= 0 (got -2)"));
    assert!(
        msg(r#"{"maxTokens":1.5,"targetTokens":1}"#).contains("$.maxTokens: expected an integer")
    );
    assert!(
        msg(r#"{"maxTokens":10,"targetTokens":5,"outputReserve":-1}"#)
            .contains("$.outputReserve: output_reserve is -1")
    );
    assert!(
        msg(r#"{"maxTokens":10,"targetTokens":5,"reservedSlots":[]}"#)
            .contains("$.reservedSlots: expected an object")
    );
    assert!(
        msg(r#"{"maxTokens":10,"targetTokens":5,"reservedSlots":{"Message":-3}}"#)
            .contains("$.reservedSlots.Message")
    );
    assert!(
        msg(r#"{"maxTokens":10,"targetTokens":5,"estimationSafetyMarginPercent":150}"#)
            .contains("$.estimationSafetyMarginPercent")
    );
    assert!(msg("null").contains("$: expected a budget object"));
    // Defaults, nulls and unknown keys; the round trip.
    let full = b(
        r#"{"maxTokens":1000,"targetTokens":800,"outputReserve":50,"reservedSlots":{"SystemPrompt":30,"Memory":null},"estimationSafetyMarginPercent":5,"extra":1}"#,
    );
    assert!(full.is_err(), "a reserved slot of null is not a number");
    let mut want = Budget::new(1000, 800).unwrap();
    want.set_output_reserve(50).unwrap();
    want.reserve("SystemPrompt", 30).unwrap();
    want.set_safety_margin(5.0).unwrap();
    let doc = r#"{"maxTokens":1000,"targetTokens":800,"outputReserve":50,"reservedSlots":{"SystemPrompt":30},"estimationSafetyMarginPercent":5,"extra":1}"#;
    let got = b(doc).unwrap();
    assert_eq!(got, want);
    let text = policy::budget_to_json(&got);
    assert_eq!(b(&text).unwrap(), want);
    assert_eq!(policy::budget_to_json(&b(&text).unwrap()), text);
    let plain = b(r#"{"maxTokens":10,"targetTokens":5,"outputReserve":null}"#).unwrap();
    assert_eq!(plain, Budget::new(10, 5).unwrap());
}

#[test]
fn case_rules_defaults_and_unknown_keys() {
    // Enum values (and scorer types) case-insensitively; keys exactly.
    let p = read(r#"{"scorers":[{"type":"RECENCY","weight":2}],"slicerType":"KnapSack","placerType":"ushaped","overflowStrategy":"Proceed","knapsackBucketSize":10}"#).unwrap();
    assert!(matches!(
        p.engine.slicer,
        Slicer::Knapsack(Knapsack { bucket_size: 10 })
    ));
    assert_eq!(p.placer, Some(Placer::UShaped));
    assert_eq!(p.overflow, Overflow::Proceed);
    // "SlicerType" is not a key of the format: ignored, so greedy.
    let p = read(r#"{"scorers":[{"type":"recency","weight":1}],"SlicerType":"knapsack","Scorers":7,"whatever":{"a":[1]}}"#).unwrap();
    assert!(matches!(p.engine.slicer, Slicer::Greedy));
    // Absent and null take the defaults.
    let p = read(r#"{"scorers":[{"type":"recency","weight":1}],"slicerType":null,"placerType":null,"deduplicationEnabled":null,"overflowStrategy":null,"quotas":null,"knapsackBucketSize":null}"#).unwrap();
    assert!(matches!(p.engine.slicer, Slicer::Greedy));
    assert_eq!(p.placer, Some(Placer::Chronological));
    assert!(p.deduplication);
    assert_eq!(p.overflow, Overflow::Throw);
    let p = read(r#"{"scorers":[{"type":"recency","weight":1}],"slicerType":"knapsack"}"#).unwrap();
    assert!(matches!(
        p.engine.slicer,
        Slicer::Knapsack(Knapsack { bucket_size: 100 })
    ));
    let p = read(r#"{"scorers":[{"type":"recency","weight":1}],"slicerType":"stream"}"#).unwrap();
    assert!(matches!(p.engine.slicer, Slicer::Stream(32)));
    // A one-entry composite is still a composite, weight normalised to 1.
    let p = read(r#"{"scorers":[{"type":"priority","weight":7}]}"#).unwrap();
    assert_eq!(
        p.scorer,
        Some(Scorer::Composite(vec![(Scorer::Priority, 1.0)], vec![7.0]))
    );
    // A quota with one bound: the other takes 0 or 100.
    let p = read(r#"{"scorers":[{"type":"priority","weight":7}],"quotas":[{"kind":"Message","minPercent":10},{"kind":"Document","maxPercent":40}]}"#).unwrap();
    let Slicer::Quota(q) = &p.engine.slicer else {
        panic!()
    };
    assert_eq!(q.entries()[0].cap_percent, 100.0);
    assert_eq!(q.entries()[1].require_percent, 0.0);
}

/// A .NET policy file as the .NET writer writes one.
const DOTNET: &str = r#"{
  "name": "support-bot",
  "description": "Support conversations with retrieved articles",
  "scorers": [
    { "type": "recency", "weight": 2.0 },
    { "type": "kind", "weight": 1.0, "kindWeights": { "SystemPrompt": 1.0, "Document": 0.7, "Message": 0.3 } },
    { "type": "tag", "weight": 1.5, "tagWeights": { "billing": 2.0, "urgent": 3.0 } },
    { "type": "scaled", "weight": 0.5, "innerScorer": { "type": "priority", "weight": 1.0 } }
  ],
  "slicerType": "knapsack",
  "placerType": "uShaped",
  "deduplicationEnabled": false,
  "overflowStrategy": "truncate",
  "knapsackBucketSize": 50,
  "quotas": [ { "kind": "Document", "minPercent": 10, "maxPercent": 60 } ]
}"#;

#[test]
fn a_dotnet_policy_reads_as_its_pipeline_by_hand() {
    let p = read(DOTNET).unwrap();
    let kind = Scorer::kind(Some(vec![
        ("SystemPrompt".into(), 1.0),
        ("Document".into(), 0.7),
        ("Message".into(), 0.3),
    ]))
    .unwrap();
    let tag = Scorer::tag(vec![("billing".into(), 2.0), ("urgent".into(), 3.0)]).unwrap();
    let scorer = Scorer::composite(vec![
        (Scorer::Recency, 2.0),
        (kind, 1.0),
        (tag, 1.5),
        (Scorer::Scaled(Box::new(Scorer::Priority)), 0.5),
    ])
    .unwrap();
    let slicer = Slicer::Quota(
        Quota::new(
            Slicer::Knapsack(Knapsack::new(50).unwrap()),
            vec![QuotaEntry {
                kind: "Document".into(),
                require_percent: 10.0,
                cap_percent: 60.0,
            }],
        )
        .unwrap(),
    );
    let mut by_hand = Pipeline::new(Some(scorer), Engine::new(slicer), Some(Placer::UShaped));
    by_hand.deduplication = false;
    by_hand.overflow = Overflow::Truncate;
    let mut rng = Rng(7);
    for _ in 0..40 {
        let (items, budget) = random_items(&mut rng);
        assert_eq!(
            selection(&p, &items, &budget),
            selection(&by_hand, &items, &budget)
        );
    }
    assert_eq!(p.policy.name.as_deref(), Some("support-bot"));
    let text = write(&p);
    assert!(text.contains("\"description\": \"Support conversations with retrieved articles\""));
    validate(&text);
}

// ---- random pipelines and items ------------------------------------------------

const KINDS: [&str; 5] = [
    "Message",
    "Document",
    "ToolOutput",
    "Memory",
    "SystemPrompt",
];

fn random_items(rng: &mut Rng) -> (Items, Budget) {
    let mut items = Items::new();
    let n = 1 + rng.below(30) as usize;
    for i in 0..n {
        let kind = KINDS[rng.below(5) as usize];
        let tokens = rng.below(300) as i64;
        let score = rng.below(101) as f64 / 100.0;
        items
            .push(NewItem {
                tokens,
                score,
                kind: Some(kind),
            })
            .unwrap();
        if rng.chance(60) {
            // Some repeated contents, for deduplication.
            let c = format!("content {}", rng.below(n as u64 / 2 + 1));
            items.set_content(i, &c).unwrap();
        }
        if rng.chance(70) {
            items
                .set_timestamp(i, 1_700_000_000_000 - rng.below(1_000_000_000) as i64)
                .unwrap();
        }
        if rng.chance(50) {
            items.set_priority(i, rng.below(10) as i64).unwrap();
        }
        if rng.chance(50) {
            items
                .set_relevance_hint(i, rng.below(11) as f64 / 10.0)
                .unwrap();
        }
        for t in ["billing", "urgent", "db"] {
            if rng.chance(25) {
                items.add_tag(i, t).unwrap();
            }
        }
        if rng.chance(30) {
            items.set_metadata(i, "cupel:trust", "0.7").unwrap();
        }
        if rng.chance(20) {
            items.set_metadata(i, "tier", "gold").unwrap();
        }
        if rng.chance(10) {
            items.set_pinned(i, true).unwrap();
        }
    }
    let max = 200 + rng.below(3000) as i64;
    let mut budget = Budget::new(max, max - rng.below(150) as i64).unwrap();
    if rng.chance(30) {
        budget.set_output_reserve(rng.below(50) as i64).unwrap();
    }
    (items, budget)
}

fn random_scorer(rng: &mut Rng, depth: u32) -> Scorer {
    let n = if depth >= 2 { 10 } else { 12 };
    match rng.below(n) {
        0 => Scorer::Recency,
        1 => Scorer::Priority,
        2 => Scorer::Frequency,
        3 => Scorer::Reflexive,
        4 => Scorer::Given,
        5 => Scorer::kind(if rng.chance(50) {
            None
        } else {
            Some(vec![
                ("Message".into(), rng.below(10) as f64 / 7.0),
                ("ToolOutput".into(), 0.3),
            ])
        })
        .unwrap(),
        6 => Scorer::tag(vec![
            ("billing".into(), 1.0 + rng.below(3) as f64),
            ("db".into(), 0.25),
        ])
        .unwrap(),
        7 => Scorer::metadata_trust(rng.below(11) as f64 / 10.0).unwrap(),
        8 => Scorer::metadata_key("tier", "gold", 0.5 + rng.below(5) as f64 / 3.0).unwrap(),
        9 => {
            let curve = match rng.below(3) {
                0 => Curve::Exponential {
                    half_life_secs: 3600.0 * (1 + rng.below(48)) as f64,
                },
                1 => Curve::Window {
                    max_age_secs: 86_400.0 * (1 + rng.below(9)) as f64 / 3.0,
                },
                _ => Curve::Step {
                    windows: vec![(3600.0, 0.9), (86_400.0, 0.5), (604_800.0, 0.1)],
                },
            };
            Scorer::Decay(
                Decay::new(curve, 1_700_000_000_000, rng.below(11) as f64 / 10.0).unwrap(),
            )
        }
        10 => Scorer::Scaled(Box::new(random_scorer(rng, depth + 1))),
        _ => {
            let k = 1 + rng.below(3);
            Scorer::composite(
                (0..k)
                    .map(|_| {
                        (
                            random_scorer(rng, depth + 1),
                            (1 + rng.below(97)) as f64 / 7.0,
                        )
                    })
                    .collect(),
            )
            .unwrap()
        }
    }
}

/// A slicer of every form a policy document holds.
fn random_slicer(rng: &mut Rng) -> Slicer {
    let base = match rng.below(4) {
        0 => Slicer::Greedy,
        1 => Slicer::Knapsack(Knapsack::new(1 + rng.below(60) as i64).unwrap()),
        2 => Slicer::Stream(1 + rng.below(8) as usize),
        _ => {
            return Slicer::CountKnapsack(
                CountQuota::knapsack(
                    1 + rng.below(30) as i64,
                    vec![CountEntry {
                        kind: "Message".into(),
                        require: rng.below(3) as u32,
                        cap: 3 + rng.below(5) as u32,
                    }],
                    if rng.chance(50) {
                        Scarcity::Degrade
                    } else {
                        Scarcity::Error
                    },
                )
                .unwrap(),
            )
        }
    };
    if matches!(base, Slicer::Stream(_)) {
        return base;
    }
    let mut s = base;
    if rng.chance(50) {
        s = Slicer::Quota(
            Quota::new(
                s,
                vec![
                    QuotaEntry {
                        kind: "Document".into(),
                        require_percent: rng.below(30) as f64,
                        cap_percent: 50.0 + rng.below(51) as f64,
                    },
                    QuotaEntry {
                        kind: "message".into(),
                        require_percent: 10.5,
                        cap_percent: 90.0,
                    },
                ],
            )
            .unwrap(),
        );
    }
    if rng.chance(40) && !matches!(s, Slicer::Knapsack(_)) {
        s = Slicer::CountQuota(
            CountQuota::new(
                s,
                vec![CountEntry {
                    kind: "ToolOutput".into(),
                    require: rng.below(2) as u32,
                    cap: 1 + rng.below(4) as u32,
                }],
                Scarcity::Degrade,
            )
            .unwrap(),
        );
    }
    s
}

fn random_pipeline(rng: &mut Rng) -> Pipeline {
    let scorer = match rng.below(10) {
        0 => None,
        1 => Some(random_scorer(rng, 2)),
        _ => Some(
            Scorer::composite(
                (0..1 + rng.below(4))
                    .map(|_| (random_scorer(rng, 1), (1 + rng.below(50)) as f64 / 3.0))
                    .collect(),
            )
            .unwrap(),
        ),
    };
    let placer = [None, Some(Placer::Chronological), Some(Placer::UShaped)][rng.below(3) as usize];
    let mut engine = Engine::new(random_slicer(rng));
    if rng.chance(20) {
        engine.memory_limit = 1 << (20 + rng.below(8));
    }
    let mut p = Pipeline::new(scorer, engine, placer);
    p.deduplication = rng.chance(60);
    p.overflow = [Overflow::Throw, Overflow::Truncate, Overflow::Proceed][rng.below(3) as usize];
    if rng.chance(30) {
        p.policy.name = Some(format!("policy \"{}\"\n", rng.below(100)));
    }
    if rng.chance(20) {
        p.policy.description = Some("ünïcode — text".into());
    }
    if rng.chance(20) {
        p.policy.session_slack = Some(rng.below(90) as f64 / 100.0);
    }
    if rng.chance(15) {
        p.tokenizer = Some(cupel::text::tokenizer::Tokenizer::builtin("cl100k_base").unwrap());
    }
    p
}

/// What a run selects: its outcome or its error, and every decision.
fn selection(p: &Pipeline, items: &Items, budget: &Budget) -> String {
    let mut report = Report::default();
    match p.run(items, budget, Some(&mut report)) {
        Err(e) => format!("error {e:?}"),
        Ok(placed) => {
            let decisions = |list: &[cupel::pipeline::Decision]| {
                list.iter()
                    // A one-scorer composite adds its score to 0.0, which
                    // turns a -0.0 into 0.0: the same score.
                    .map(|d| {
                        format!(
                            "{}:{:?}:{:?}:{}",
                            d.item,
                            d.reason,
                            (d.score + 0.0).to_bits(),
                            d.added_tokens
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            };
            format!(
                "{placed:?} in [{}] out [{}] {:?}",
                decisions(&report.included),
                decisions(&report.excluded),
                report.outcome.shortfalls
            )
        }
    }
}

fn schema() -> &'static jsonschema::Validator {
    static V: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/policy.schema.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        jsonschema::validator_for(&schema).expect("the schema compiles")
    })
}

/// The document is valid against schema/policy.schema.json.
fn validate(text: &str) {
    let doc: serde_json::Value = serde_json::from_str(text).unwrap();
    let errors: Vec<String> = schema()
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{text}\nis not valid: {errors:#?}");
}

#[test]
fn every_pipeline_form_round_trips_exactly() {
    let mut rng = Rng(0x005e_ed29);
    let mut forms = std::collections::BTreeSet::new();
    for case in 0..600 {
        let p = random_pipeline(&mut rng);
        let text = write(&p);
        validate(&text);
        let back = read(&text).unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
        assert_eq!(write(&back), text, "case {case}: written again");
        assert_eq!(back.deduplication, p.deduplication);
        assert_eq!(back.overflow, p.overflow);
        assert_eq!(back.placer, p.placer);
        assert_eq!(back.engine, p.engine, "case {case}: the slicer\n{text}");
        assert_eq!(back.policy, p.policy);
        assert_eq!(
            back.tokenizer.as_ref().and_then(|t| t.name()),
            p.tokenizer.as_ref().and_then(|t| t.name())
        );
        for _ in 0..3 {
            let (items, budget) = random_items(&mut rng);
            assert_eq!(
                selection(&back, &items, &budget),
                selection(&p, &items, &budget),
                "case {case}: the selection\n{text}"
            );
        }
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        forms.insert(doc["slicerType"].as_str().unwrap().to_string());
        for key in [
            "quotas",
            "countQuotas",
            "tokenizer",
            "sessionSlack",
            "memoryLimitBytes",
            "name",
        ] {
            if doc.get(key).is_some() {
                forms.insert(key.to_string());
            }
        }
        for s in doc["scorers"].as_array().unwrap() {
            forms.insert(s["type"].as_str().unwrap().to_string());
        }
    }
    // Every form was written and read at least once.
    for form in [
        "greedy",
        "knapsack",
        "stream",
        "countConstrainedKnapsack",
        "quotas",
        "countQuotas",
        "tokenizer",
        "sessionSlack",
        "memoryLimitBytes",
        "name",
        "recency",
        "priority",
        "kind",
        "tag",
        "frequency",
        "reflexive",
        "scaled",
        "given",
        "decay",
        "metadataTrust",
        "metadataKey",
        "composite",
    ] {
        assert!(forms.contains(form), "{form} never came up: {forms:?}");
    }
}

#[test]
fn pipelines_a_document_cannot_hold_are_refused() {
    let greedy_count = CountQuota::new(
        Slicer::Greedy,
        vec![CountEntry {
            kind: "Message".into(),
            require: 0,
            cap: 2,
        }],
        Scarcity::Degrade,
    )
    .unwrap();
    let quota_around_count = Slicer::Quota(
        Quota::new(
            Slicer::CountQuota(greedy_count),
            vec![QuotaEntry {
                kind: "Message".into(),
                require_percent: 0.0,
                cap_percent: 50.0,
            }],
        )
        .unwrap(),
    );
    let nested_quota = Slicer::Quota(
        Quota::new(
            Slicer::Quota(Quota::new(Slicer::Greedy, vec![]).unwrap()),
            vec![],
        )
        .unwrap(),
    );
    for slicer in [quota_around_count, nested_quota] {
        let p = Pipeline::new(None, Engine::new(slicer), None);
        match policy::pipeline_to_json(&p) {
            Err(cupel::Error::Unsupported(m)) => assert!(m.contains("cannot hold"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
    // A vocabulary file of the 256 single bytes (base64 and rank per line).
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut vocab = String::new();
    for b in 0..=255u8 {
        let (hi, lo) = (b >> 2, (b & 3) << 4);
        vocab += &format!(
            "{}{}== {b}\n",
            B64[hi as usize] as char, B64[lo as usize] as char
        );
    }
    let mut p = Pipeline::new(None, Engine::new(Slicer::Greedy), None);
    p.tokenizer =
        Some(cupel::text::tokenizer::Tokenizer::from_tiktoken(vocab.as_bytes(), None).unwrap());
    assert!(
        matches!(policy::pipeline_to_json(&p), Err(cupel::Error::Unsupported(m)) if m.contains("vocabulary file"))
    );
}

/// (name, [(type, weight)], slicer, bucket, placer).
type PresetRow = (
    &'static str,
    &'static [(&'static str, f64)],
    &'static str,
    Option<i64>,
    &'static str,
);

#[test]
fn presets_match_their_table() {
    // (name, [(type, weight)], slicer, bucket, placer) as docs/policies.md
    // and abi-policy.md give them.
    let table: [PresetRow; 8] = [
        (
            "Chat",
            &[("recency", 3.0), ("kind", 1.0)],
            "greedy",
            None,
            "chronological",
        ),
        (
            "CodeReview",
            &[("kind", 2.0), ("priority", 2.0), ("recency", 1.0)],
            "greedy",
            None,
            "chronological",
        ),
        (
            "Rag",
            &[("reflexive", 3.0), ("kind", 1.0)],
            "greedy",
            None,
            "uShaped",
        ),
        (
            "DocumentQa",
            &[("kind", 2.0), ("reflexive", 2.0), ("priority", 1.0)],
            "knapsack",
            Some(100),
            "uShaped",
        ),
        (
            "ToolUse",
            &[("kind", 2.0), ("recency", 2.0), ("priority", 1.0)],
            "greedy",
            None,
            "chronological",
        ),
        (
            "LongRunning",
            &[("recency", 3.0), ("frequency", 1.0), ("kind", 1.0)],
            "greedy",
            None,
            "chronological",
        ),
        (
            "Debugging",
            &[("priority", 3.0), ("kind", 2.0), ("recency", 1.0)],
            "greedy",
            None,
            "chronological",
        ),
        (
            "AgentLoop",
            &[("recency", 3.0), ("kind", 2.0), ("reflexive", 1.0)],
            "greedy",
            None,
            "chronological",
        ),
    ];
    assert_eq!(presets::NAMES.len(), table.len());
    for (name, scorers, slicer, bucket, placer) in table {
        for spelling in [name.to_string(), name.to_lowercase(), name.to_uppercase()] {
            let p = presets::preset(&spelling).unwrap();
            let doc: serde_json::Value = serde_json::from_str(&write(&p)).unwrap();
            let got: Vec<(String, f64)> = doc["scorers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    (
                        s["type"].as_str().unwrap().to_string(),
                        s["weight"].as_f64().unwrap(),
                    )
                })
                .collect();
            let want: Vec<(String, f64)> =
                scorers.iter().map(|&(t, w)| (t.to_string(), w)).collect();
            assert_eq!(got, want, "{name}");
            assert_eq!(doc["slicerType"], slicer, "{name}");
            assert_eq!(doc["knapsackBucketSize"].as_i64(), bucket, "{name}");
            assert_eq!(doc["placerType"], placer, "{name}");
            assert_eq!(doc["deduplicationEnabled"], true, "{name}");
            assert_eq!(doc["overflowStrategy"], "throw", "{name}");
            assert_eq!(doc["name"], name, "{name}");
            // The kind scorer's weights are the KindScorer's defaults.
            if let Some(k) = doc["scorers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["type"] == "kind")
            {
                assert_eq!(k["kindWeights"]["SystemPrompt"], 1.0);
                assert_eq!(k["kindWeights"]["Message"], 0.2);
            }
            validate(&write(&p));
        }
    }
    let agent = presets::preset("agentloop").unwrap();
    assert_eq!(agent.policy.session_slack, Some(0.2));
    assert_eq!(
        agent.tokenizer.as_ref().and_then(|t| t.name()),
        Some("o200k_base")
    );
    assert_eq!(cupel::Session::new(agent).slack(), 0.2);
    match presets::preset("Nope") {
        Err(cupel::Error::InvalidArgument(m)) => {
            assert!(
                m.contains("\"Nope\"") && m.contains("Chat, CodeReview, Rag, DocumentQa"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
}

/// The session slack of a policy is the slack of sessions made from it.
#[test]
fn session_slack_comes_from_the_policy() {
    let p = read(&with(r#""sessionSlack":0.35"#)).unwrap();
    assert_eq!(cupel::Session::new(p).slack(), 0.35);
    let p = read(&with("")).unwrap();
    assert_eq!(cupel::Session::new(p).slack(), 0.2);
}

#[test]
fn stream_in_a_pipeline_is_the_stream_over_the_sort_order() {
    let mut rng = Rng(99);
    for case in 0..300 {
        let (mut items, budget) = random_items(&mut rng);
        for i in 0..items.len() {
            items.set_pinned(i, false).unwrap();
        }
        let batch = 1 + rng.below(6) as usize;
        let mut p = Pipeline::new(None, Engine::new(Slicer::Stream(batch)), None);
        p.deduplication = false;
        let placed = p.run(&items, &budget, None).unwrap();
        // The same through the streaming API, fed the Sort stage's order.
        let view = items.view();
        let order = cupel::sort::by_value_desc((0..items.len() as u32).map(|i| view.score(i)));
        let cands: Vec<u32> = order.into_iter().filter(|&i| view.tokens(i) >= 0).collect();
        let target = budget.effective(0).unwrap().target;
        let mut s = cupel::Stream::new(target, batch);
        for &i in &cands {
            if s.push(view.tokens(i), view.score(i)).unwrap() {
                break;
            }
        }
        let want: Vec<u32> = s.finish().iter().map(|&k| cands[k as usize]).collect();
        assert_eq!(placed, want, "case {case}");
    }
}

#[test]
fn sensitivity_matches_items_by_push_index_not_content() {
    // Two items with the same content, one taken by each pipeline.
    let mut items = Items::new();
    for (t, s) in [(60, 0.9), (60, 0.1), (30, 0.5)] {
        items
            .push(NewItem {
                tokens: t,
                score: s,
                kind: None,
            })
            .unwrap();
    }
    items.set_content(0, "same words").unwrap();
    items.set_content(1, "same words").unwrap();
    items.set_priority(1, 9).unwrap();
    items.set_priority(0, 1).unwrap();
    let budget = Budget::new(100, 100).unwrap();
    let mut given = Pipeline::new(
        None,
        Engine::new(Slicer::Greedy),
        Some(Placer::Chronological),
    );
    given.deduplication = false;
    let mut by_priority = Pipeline::new(Some(Scorer::Priority), Engine::new(Slicer::Greedy), None);
    by_priority.deduplication = false;
    let s = analytics::sensitivity(
        &[("given", &given), ("priority", &by_priority)],
        &items,
        &budget,
    )
    .unwrap();
    assert_eq!(s.variants.len(), 2);
    let diffs: Vec<(u32, Vec<bool>)> = s.diffs.clone();
    assert_eq!(diffs, vec![(0, vec![true, false]), (1, vec![false, true])]);
    let doc = s.json(&items);
    assert_eq!(doc["diffs"][0]["index"], 0);
    assert_eq!(doc["diffs"][1]["index"], 1);
    assert_eq!(doc["diffs"][1]["content"], "same words");
    assert_eq!(
        doc["diffs"][0]["statuses"][0],
        serde_json::json!({"label": "given", "status": "Included"})
    );
    assert_eq!(
        doc["diffs"][0]["statuses"][1],
        serde_json::json!({"label": "priority", "status": "Excluded"})
    );
    assert_eq!(doc["variants"][1]["label"], "priority");
    assert!(doc["variants"][0]["report"]["included"].is_array());
    // Item 2 is taken by both: no diff.
    assert!(s.diffs.iter().all(|(i, _)| *i != 2));
    // Fewer than two variants; a variant that fails names its label.
    assert!(matches!(
        analytics::sensitivity(&[("only", &given)], &items, &budget),
        Err(cupel::Error::InvalidArgument(m)) if m.contains("count is 1")
    ));
    let small = Budget::new(10, 10).unwrap();
    items.set_pinned(0, true).unwrap();
    match analytics::sensitivity(&[("a", &given), ("b", &by_priority)], &items, &small) {
        Err(e) => assert!(e.to_string().contains("variant 0 (\"a\") failed"), "{e}"),
        Ok(_) => panic!("pinned items over the budget must fail"),
    }
}

#[test]
fn analytics_edge_cases() {
    let p = Pipeline::new(
        None,
        Engine::new(Slicer::Greedy),
        Some(Placer::Chronological),
    );
    // An empty report, an empty list.
    let empty = Report::default();
    let none = Items::new();
    assert_eq!(analytics::budget_utilization(&empty), 0.0);
    assert_eq!(analytics::kind_diversity(&empty, &none).unwrap(), 0);
    assert_eq!(analytics::timestamp_coverage(&empty, &none).unwrap(), 0.0);
    // A zero budget: nothing included, utilization 0 (not NaN).
    let mut items = Items::new();
    for (t, k) in [
        (10, "Message"),
        (20, "message"),
        (30, "Document"),
        (0, "Memory"),
    ] {
        items
            .push(NewItem {
                tokens: t,
                score: 0.5,
                kind: Some(k),
            })
            .unwrap();
    }
    let mut report = Report::default();
    p.run(&items, &Budget::new(0, 0).unwrap(), Some(&mut report))
        .unwrap();
    assert_eq!(report.max_tokens, 0);
    assert_eq!(analytics::budget_utilization(&report), 0.0);
    // Kinds compared case-insensitively; coverage of timestamped items.
    items.set_timestamp(0, 5).unwrap();
    items.set_timestamp(2, 6).unwrap();
    let mut report = Report::default();
    p.run(&items, &Budget::new(200, 100).unwrap(), Some(&mut report))
        .unwrap();
    assert_eq!(analytics::kind_diversity(&report, &items).unwrap(), 3);
    assert_eq!(analytics::timestamp_coverage(&report, &items).unwrap(), 0.5);
    assert_eq!(analytics::budget_utilization(&report), 60.0 / 200.0);
    let doc = report.json_value(&items);
    assert_eq!(doc["analytics"]["budgetUtilization"], 0.3);
    assert_eq!(doc["analytics"]["kindDiversity"], 3);
    assert_eq!(doc["analytics"]["timestampCoverage"], 0.5);
    assert!(doc["analytics"].get("quotas").is_none());
    // A report of another list.
    assert!(analytics::kind_diversity(&report, &none).is_err());
    assert!(analytics::timestamp_coverage(&report, &none).is_err());
}

#[test]
fn quota_rows_in_the_report_json() {
    let mut items = Items::new();
    for (t, k) in [
        (30, "Message"),
        (30, "Document"),
        (20, "ToolOutput"),
        (25, "ToolOutput"),
        (10, "Memory"),
    ] {
        items
            .push(NewItem {
                tokens: t,
                score: 0.5,
                kind: Some(k),
            })
            .unwrap();
    }
    items.set_pinned(4, true).unwrap();
    let quota = Quota::new(
        Slicer::Greedy,
        vec![
            QuotaEntry {
                kind: "message".into(),
                require_percent: 10.0,
                cap_percent: 40.0,
            },
            QuotaEntry {
                kind: "Document".into(),
                require_percent: 0.0,
                cap_percent: 0.0,
            },
        ],
    )
    .unwrap();
    let counted = CountQuota::new(
        Slicer::Quota(quota),
        vec![CountEntry {
            kind: "ToolOutput".into(),
            require: 1,
            cap: 1,
        }],
        Scarcity::Degrade,
    )
    .unwrap();
    let p = Pipeline::new(None, Engine::new(Slicer::CountQuota(counted)), None);
    let mut report = Report::default();
    p.run(&items, &Budget::new(110, 110).unwrap(), Some(&mut report))
        .unwrap();
    let doc = report.json_value(&items);
    let rows = doc["analytics"]["quotas"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{doc}");
    // Outermost first: the count quota, then the percentages.
    assert_eq!(rows[0]["mode"], "count");
    assert_eq!(rows[0]["kind"], "ToolOutput");
    assert_eq!(rows[0]["actual"], 1.0);
    assert_eq!(rows[0]["utilization"], 1.0);
    assert_eq!(rows[1]["mode"], "percentage");
    assert_eq!(rows[1]["kind"], "message");
    // The effective target is 100 (the pinned 10 tokens aside): the
    // message took 30 % of it, three quarters of its 40 % cap.
    assert_eq!(report.outcome.effective_target, 100);
    assert!(report.included.iter().any(|d| d.item == 0));
    assert_eq!(rows[1]["actual"], 30.0);
    assert_eq!(rows[1]["utilization"], 0.75);
    assert_eq!(rows[2]["kind"], "Document");
    assert_eq!(rows[2]["actual"], 0.0);
    assert_eq!(rows[2]["utilization"], 0.0, "a cap of 0");
}

/// The events of one traced run, as (kind, stage, counts, item, reason).
type Seen = Arc<Mutex<Vec<String>>>;

fn traced(p: &mut Pipeline, level: Level) -> Seen {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    p.trace = Some(Hook {
        level,
        callback: Arc::new(move |e| {
            let stage = e.stage.map_or("-", |s| s.name());
            let line = match e.kind {
                Kind::Pipeline => format!(
                    "pipeline in={} out={} excluded={} max={} level={}",
                    e.item_count_in,
                    e.item_count_out,
                    e.exclusion_count,
                    e.max_tokens,
                    e.level.name()
                ),
                Kind::Stage => format!(
                    "stage {stage} in={} out={} excluded={}",
                    e.item_count_in, e.item_count_out, e.exclusion_count
                ),
                Kind::Exclusion => format!(
                    "exclusion {stage} item={} {:?} {} {}",
                    e.item,
                    e.reason.unwrap(),
                    e.item_kind,
                    e.tokens
                ),
                Kind::Included => format!(
                    "included item={} {} {} {}",
                    e.item, e.item_kind, e.tokens, e.score
                ),
            };
            log.lock().unwrap().push(line);
        }),
    });
    seen
}

#[test]
fn trace_events_per_level() {
    // The contract's fixture: 6, 7 and 9 events.
    let mut items = Items::new();
    for (t, k) in [(100, "Message"), (200, "Document"), (50, "ToolOutput")] {
        items
            .push(NewItem {
                tokens: t,
                score: 0.5,
                kind: Some(k),
            })
            .unwrap();
    }
    for i in 0..3 {
        items.set_timestamp(i, 1000 * (i as i64 + 1)).unwrap();
    }
    let budget = Budget::new(300, 250).unwrap();
    for (level, count) in [(Level::Stages, 6), (Level::Exclusions, 7), (Level::Full, 9)] {
        let mut p = Pipeline::new(
            Some(Scorer::Recency),
            Engine::new(Slicer::Greedy),
            Some(Placer::Chronological),
        );
        let seen = traced(&mut p, level);
        let placed = p.run(&items, &budget, None).unwrap();
        assert_eq!(placed, vec![1, 2]);
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), count, "{level:?}: {seen:#?}");
        assert_eq!(seen[0], "stage Classify in=3 out=3 excluded=0");
        assert_eq!(seen[1], "stage Score in=3 out=3 excluded=0");
        assert_eq!(seen[2], "stage Deduplicate in=3 out=3 excluded=0");
        assert_eq!(seen[3], "stage Slice in=3 out=2 excluded=1");
        if level >= Level::Exclusions {
            assert_eq!(seen[4], "exclusion Slice item=0 BudgetExceeded Message 100");
        }
        let place = seen
            .iter()
            .position(|l| l.starts_with("stage Place"))
            .unwrap();
        assert_eq!(seen[place], "stage Place in=2 out=2 excluded=0");
        if level == Level::Full {
            assert_eq!(seen[place + 1], "included item=1 Document 200 0.5");
            assert_eq!(seen[place + 2], "included item=2 ToolOutput 50 1");
        }
        assert_eq!(
            seen.last().unwrap(),
            &format!(
                "pipeline in=3 out=2 excluded=1 max=300 level={}",
                level.name()
            )
        );
    }
}

#[test]
fn trace_attributes_each_exclusion_to_its_stage() {
    let mut items = Items::new();
    for (t, s, k) in [
        (-5, 0.5, "Message"),
        (10, 0.9, "Message"),
        (10, 0.8, "Message"),
        (500, 0.7, "Document"),
        (20, 0.1, "SystemPrompt"),
    ] {
        items
            .push(NewItem {
                tokens: t,
                score: s,
                kind: Some(k),
            })
            .unwrap();
    }
    items.set_content(1, "dup").unwrap();
    items.set_content(2, "dup").unwrap();
    items.set_pinned(4, true).unwrap();
    let mut p = Pipeline::new(
        None,
        Engine::new(Slicer::Greedy),
        Some(Placer::Chronological),
    );
    let seen = traced(&mut p, Level::Full);
    let mut report = Report::default();
    p.run(&items, &Budget::new(100, 100).unwrap(), Some(&mut report))
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    let want = [
        "stage Classify in=5 out=4 excluded=1",
        "exclusion Classify item=0 NegativeTokens Message -5",
        "stage Score in=3 out=3 excluded=0",
        "stage Deduplicate in=3 out=2 excluded=1",
        "exclusion Deduplicate item=2 Deduplicated Message 10",
        "stage Slice in=2 out=1 excluded=1",
        "exclusion Slice item=3 BudgetExceeded Document 500",
        "stage Place in=2 out=2 excluded=0",
    ];
    assert_eq!(&seen[..want.len()], &want, "{seen:#?}");
    assert!(
        seen[want.len()].starts_with("included item=4 SystemPrompt 20"),
        "{seen:#?}"
    );
    assert_eq!(
        seen.last().unwrap(),
        "pipeline in=5 out=2 excluded=3 max=100 level=Full"
    );
    // The host's report is the same as an untraced run's (durations aside).
    let mut plain = Report::default();
    let untraced = Pipeline::new(
        None,
        Engine::new(Slicer::Greedy),
        Some(Placer::Chronological),
    );
    untraced
        .run(&items, &Budget::new(100, 100).unwrap(), Some(&mut plain))
        .unwrap();
    assert_eq!(report.included, plain.included);
    assert_eq!(report.excluded, plain.excluded);
}

#[test]
fn a_failed_run_sends_no_events_and_tracing_never_changes_a_result() {
    let mut rng = Rng(4242);
    for case in 0..200 {
        let mut p = random_pipeline(&mut rng);
        p.tokenizer = None;
        let (items, budget) = random_items(&mut rng);
        let want = selection(&p, &items, &budget);
        let placed = p.run(&items, &budget, None);
        let seen = traced(
            &mut p,
            [Level::Stages, Level::Exclusions, Level::Full][case % 3],
        );
        assert_eq!(selection(&p, &items, &budget), want, "case {case}");
        let n = seen.lock().unwrap().len();
        seen.lock().unwrap().clear();
        let traced_run = p.run(&items, &budget, None);
        assert_eq!(traced_run.is_ok(), placed.is_ok());
        assert_eq!(
            traced_run.as_ref().ok(),
            placed.as_ref().ok(),
            "case {case}"
        );
        let events = seen.lock().unwrap().len();
        if placed.is_err() {
            assert_eq!(events, 0, "case {case}: a failed run sent events");
            assert_eq!(n, 0);
        } else {
            assert!(events >= 6, "case {case}");
            assert!(seen.lock().unwrap().last().unwrap().starts_with("pipeline"));
        }
    }
}

#[test]
fn the_bundled_policy_file_is_valid_and_reads() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/policy.json");
    let text = std::fs::read_to_string(path).unwrap();
    validate(&text);
    let p = read(&text).unwrap();
    validate(&write(&p));
    assert_eq!(write(&read(&write(&p)).unwrap()), write(&p));
}

#[test]
fn reasons_of_the_report_are_unchanged_by_the_stage_tag() {
    // Decisions carry their stage; the JSON keeps its fields.
    let mut items = Items::new();
    items
        .push(NewItem {
            tokens: 10,
            score: 0.5,
            kind: None,
        })
        .unwrap();
    let p = Pipeline::new(None, Engine::new(Slicer::Greedy), None);
    let mut report = Report::default();
    p.run(&items, &Budget::new(5, 5).unwrap(), Some(&mut report))
        .unwrap();
    assert_eq!(report.excluded[0].reason, Reason::BudgetExceeded);
    assert_eq!(
        report.excluded[0].stage,
        cupel::pipeline::report::Stage::Slice
    );
    assert!(report.json(&items).contains("\"analytics\""));
}

/// (kind, stage, start, duration) of one event.
type Timed = (Kind, Option<cupel::pipeline::report::Stage>, u64, u64);

/// Every event's time: the stages one after another from the pipeline's
/// start, each item event at the end of its stage, the pipeline spanning
/// them all.
#[test]
fn trace_times_nest_as_spans() {
    let mut items = Items::new();
    for (t, s) in [(50, 0.9), (500, 0.8), (50, 0.7), (-1, 0.1)] {
        items
            .push(NewItem {
                tokens: t,
                score: s,
                kind: None,
            })
            .unwrap();
    }
    let times: Arc<Mutex<Vec<Timed>>> = Arc::default();
    let log = times.clone();
    let mut p = Pipeline::new(
        None,
        Engine::new(Slicer::Greedy),
        Some(Placer::Chronological),
    );
    p.trace = Some(Hook {
        level: Level::Full,
        callback: Arc::new(move |e| {
            log.lock()
                .unwrap()
                .push((e.kind, e.stage, e.start_unix_nanos, e.duration_nanos));
        }),
    });
    let before = cupel::trace::now_unix_nanos();
    let mut report = Report::default();
    p.run(&items, &Budget::new(200, 200).unwrap(), Some(&mut report))
        .unwrap();
    let after = cupel::trace::now_unix_nanos();
    let times = times.lock().unwrap().clone();
    // Each stage span lasts what the report's event of that stage says.
    for &(kind, stage, _, d) in &times {
        if kind == Kind::Stage {
            let name = stage.unwrap().name();
            let e = report.events.iter().find(|e| e.stage == name).unwrap();
            assert_eq!(d, (e.duration_ms * 1e6) as u64, "{name}");
        }
    }
    assert!(
        times.iter().any(|t| t.0 == Kind::Stage && t.3 > 0),
        "{times:?}"
    );
    let (_, _, start, total) = *times.last().unwrap();
    assert!(before <= start && start + total <= after, "{times:?}");
    let mut at = start;
    let mut stage_end = 0;
    let mut stages = 0;
    for &(kind, _, s, d) in &times[..times.len() - 1] {
        match kind {
            Kind::Stage => {
                assert_eq!(
                    s, at,
                    "a stage starts where the previous one ended: {times:?}"
                );
                at += d;
                stage_end = at;
                stages += 1;
            }
            _ => {
                assert_eq!(d, 0);
                assert_eq!(
                    s, stage_end,
                    "an item event sits at its stage's end: {times:?}"
                );
            }
        }
    }
    assert_eq!(stages, 5);
    assert_eq!(at, start + total, "the pipeline spans its stages");
    assert!(total > 0);
    // Item events of both kinds were seen.
    assert!(times.iter().any(|t| t.0 == Kind::Exclusion));
    assert!(times.iter().any(|t| t.0 == Kind::Included));
}

/// What an error shows of a wrong value: its type and a short rendering.
#[test]
fn errors_show_the_wrong_value_briefly() {
    fails(
        &with(r#""slicerType":true"#),
        &["$.slicerType: expected a string, got boolean true"],
    );
    fails(&with(r#""slicerType":[1,2]"#), &["got an array of 2"]);
    fails(&with(r#""slicerType":{"a":1}"#), &["got an object"]);
    fails(&with(r#""placerType":2.5"#), &["got number 2.5"]);
    let long = "y".repeat(200);
    let doc = with(&format!(r#""deduplicationEnabled":"{long}""#));
    match read(&doc) {
        Err(cupel::Error::InvalidArgument(m)) => {
            assert!(
                m.contains(&format!("string \"{}...", &"y".repeat(69))),
                "{m}"
            );
            assert!(!m.contains(&"y".repeat(100)), "{m}");
        }
        other => panic!("{other:?}"),
    }
    // At the limit (80 characters) the value is shown whole.
    let short = "z".repeat(71); // `string "z...z"`: 80 characters
    let doc = with(&format!(r#""deduplicationEnabled":"{short}""#));
    match read(&doc) {
        Err(cupel::Error::InvalidArgument(m)) => {
            assert!(m.contains(&format!("\"{short}\"")), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

/// A quota's share of a zero effective target is 0, not NaN.
#[test]
fn quota_rows_of_a_zero_target() {
    let mut items = Items::new();
    for (t, k) in [(0, "Message"), (10, "Document")] {
        items
            .push(NewItem {
                tokens: t,
                score: 0.5,
                kind: Some(k),
            })
            .unwrap();
    }
    let quota = Quota::new(
        Slicer::Greedy,
        vec![QuotaEntry {
            kind: "Message".into(),
            require_percent: 0.0,
            cap_percent: 50.0,
        }],
    )
    .unwrap();
    let p = Pipeline::new(None, Engine::new(Slicer::Quota(quota)), None);
    let mut report = Report::default();
    p.run(&items, &Budget::new(0, 0).unwrap(), Some(&mut report))
        .unwrap();
    assert_eq!(report.outcome.effective_target, 0);
    let row = &report.quotas[0];
    assert_eq!((row.actual, row.utilization), (0.0, 0.0), "{row:?}");
}

/// A quota may require exactly its cap.
#[test]
fn a_quota_may_require_its_cap() {
    let p = read(&with(
        r#""quotas":[{"kind":"Message","minPercent":25,"maxPercent":25}]"#,
    ))
    .unwrap();
    let Slicer::Quota(q) = &p.engine.slicer else {
        panic!("{}", write(&p))
    };
    assert_eq!(
        (q.entries()[0].require_percent, q.entries()[0].cap_percent),
        (25.0, 25.0)
    );
}
