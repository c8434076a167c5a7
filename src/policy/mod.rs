//! Policies as data (`../shared/abi-policy.md`): the .NET Cupel policy and
//! budget JSON formats, read and written, with libcupel's extensions; and
//! the named presets ([`presets`]).
//!
//! serde_json parses; [`json`] reads the parsed document field by field so
//! that every error names its JSON path. Keys are camelCase and
//! case-sensitive, enum values case-insensitive, unknown keys ignored, a
//! key absent or `null` takes its default.

pub mod json;
pub mod presets;

use serde_json::{json, Map, Value};

use self::json::{array, boolean, choice, field, integer, number, object, string, Path};
use crate::budget::Budget;
use crate::error::{Error, Result};
use crate::pipeline::{Engine, Overflow, Pipeline};
use crate::placer::Placer;
use crate::scorer::{Curve, Decay, Scorer};
use crate::slicer::{
    CountEntry, CountQuota, Knapsack, Quota, QuotaEntry, Scarcity, Slicer, DEFAULT_BUCKET_SIZE,
    DEFAULT_MEMORY_LIMIT,
};
use crate::stream::DEFAULT_BATCH_SIZE;

/// What a policy carries beyond the stages, kept on the pipeline so that
/// writing it back loses nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extras {
    pub name: Option<String>,
    pub description: Option<String>,
    /// `sessionSlack`: the slack of sessions made from the pipeline.
    pub session_slack: Option<f64>,
}

/// The scorer types, as the format names them (the .NET seven, then ours).
pub const SCORER_TYPES: [&str; 12] = [
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
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlicerType {
    Greedy,
    Knapsack,
    Stream,
    CountConstrainedKnapsack,
}

const SLICER_TYPES: [(&str, SlicerType); 4] = [
    ("greedy", SlicerType::Greedy),
    ("knapsack", SlicerType::Knapsack),
    ("stream", SlicerType::Stream),
    (
        "countConstrainedKnapsack",
        SlicerType::CountConstrainedKnapsack,
    ),
];

const PLACER_TYPES: [(&str, Option<Placer>); 3] = [
    ("chronological", Some(Placer::Chronological)),
    ("uShaped", Some(Placer::UShaped)),
    ("none", None),
];

const OVERFLOW: [(&str, Overflow); 3] = [
    ("throw", Overflow::Throw),
    ("truncate", Overflow::Truncate),
    ("proceed", Overflow::Proceed),
];

const SCARCITY: [(&str, Scarcity); 2] =
    [("degrade", Scarcity::Degrade), ("throw", Scarcity::Error)];

/// A positive integer field (`> 0`), or `default` when absent.
fn positive_int(obj: &Map<String, Value>, key: &str, at: &Path, default: i64) -> Result<i64> {
    match field(obj, key) {
        None => Ok(default),
        Some(v) => {
            let at = at.key(key);
            let n = integer(v, &at)?;
            if n <= 0 {
                return at.err(format!("must be an integer > 0 (got {n})"));
            }
            Ok(n)
        }
    }
}

/// `"only valid when slicerType is ..."` for a key set with another slicer.
fn only_with(obj: &Map<String, Value>, key: &str, at: &Path, ok: bool, when: &str) -> Result<()> {
    match field(obj, key) {
        Some(_) if !ok => at
            .key(key)
            .err(format!("only valid when slicerType is {when}")),
        _ => Ok(()),
    }
}

/// Reads a policy document into a pipeline. Every error is an invalid
/// argument (a slicer refusing its inner slicer, too).
pub fn pipeline_from_json(bytes: &[u8]) -> Result<Pipeline> {
    read_policy(bytes).map_err(|e| match e {
        Error::Unsupported(m) => Error::InvalidArgument(m),
        e => e,
    })
}

fn read_policy(bytes: &[u8]) -> Result<Pipeline> {
    let doc = json::parse_object(bytes, "policy")?;
    let root = Path::root();
    // Scorers: a composite of the entries (weights normalised).
    let Some(scorers) = field(&doc, "scorers") else {
        return root
            .key("scorers")
            .err("required: a policy needs at least one scorer");
    };
    let scorer = composite(scorers, &root.key("scorers"))?;
    let slicer_type = match field(&doc, "slicerType") {
        Some(v) => choice(v, &root.key("slicerType"), &SLICER_TYPES)?,
        None => SlicerType::Greedy,
    };
    let knapsack = matches!(
        slicer_type,
        SlicerType::Knapsack | SlicerType::CountConstrainedKnapsack
    );
    let stream = slicer_type == SlicerType::Stream;
    only_with(&doc, "knapsackBucketSize", &root, knapsack, "\"knapsack\"")?;
    only_with(&doc, "streamBatchSize", &root, stream, "\"stream\"")?;
    let bucket = positive_int(&doc, "knapsackBucketSize", &root, DEFAULT_BUCKET_SIZE)?;
    let batch = positive_int(&doc, "streamBatchSize", &root, DEFAULT_BATCH_SIZE as i64)?;
    let count_entries = match field(&doc, "countQuotas") {
        Some(v) => Some(count_quotas(v, &root.key("countQuotas"))?),
        None => None,
    };
    let scarcity = match field(&doc, "scarcity") {
        Some(v) => choice(v, &root.key("scarcity"), &SCARCITY)?,
        None => Scarcity::Degrade,
    };
    for key in ["quotas", "countQuotas"] {
        if stream && field(&doc, key).is_some() {
            return root.key(key).err("not valid when slicerType is \"stream\"");
        }
    }
    if field(&doc, "quotas").is_some() && slicer_type == SlicerType::CountConstrainedKnapsack {
        return root
            .key("quotas")
            .err("not valid when slicerType is \"countConstrainedKnapsack\"");
    }
    let mut slicer = match slicer_type {
        SlicerType::Greedy => Slicer::Greedy,
        SlicerType::Knapsack => Slicer::Knapsack(Knapsack::new(bucket).map_err(|e| root.wrap(e))?),
        SlicerType::Stream => Slicer::Stream(usize::try_from(batch).unwrap_or(usize::MAX)),
        SlicerType::CountConstrainedKnapsack => {
            let Some(entries) = count_entries.clone() else {
                return root
                    .key("countQuotas")
                    .err("required when slicerType is \"countConstrainedKnapsack\"");
            };
            let cq = CountQuota::knapsack(bucket, entries, scarcity)
                .map_err(|e| root.key("countQuotas").wrap(e))?;
            Slicer::CountKnapsack(cq)
        }
    };
    if let Some(v) = field(&doc, "quotas") {
        let entries = quotas(v, &root.key("quotas"))?;
        slicer =
            Slicer::Quota(Quota::new(slicer, entries).map_err(|e| root.key("quotas").wrap(e))?);
    }
    if let (Some(entries), false) = (
        count_entries,
        slicer_type == SlicerType::CountConstrainedKnapsack,
    ) {
        let cq = CountQuota::new(slicer, entries, scarcity).map_err(|e| {
            root.key("countQuotas").wrap(e.map_message(|m| {
                format!("{m} (with slicerType \"knapsack\", use \"countConstrainedKnapsack\")")
            }))
        })?;
        slicer = Slicer::CountQuota(cq);
    } else if field(&doc, "scarcity").is_some()
        && slicer_type != SlicerType::CountConstrainedKnapsack
    {
        return root.key("scarcity").err("only valid with countQuotas");
    }
    let mut engine = Engine::new(slicer);
    if let Some(v) = field(&doc, "memoryLimitBytes") {
        let at = root.key("memoryLimitBytes");
        let n = integer(v, &at)?;
        engine.memory_limit = match usize::try_from(n) {
            // 0 is what the C call sets too: every knapsack call fails.
            Ok(n) => n,
            _ => return at.err(format!("must be an integer >= 0 (got {n})")),
        };
    }
    let placer = match field(&doc, "placerType") {
        Some(v) => choice(v, &root.key("placerType"), &PLACER_TYPES)?,
        None => Some(Placer::Chronological),
    };
    let mut pipeline = Pipeline::new(Some(scorer), engine, placer);
    if let Some(v) = field(&doc, "deduplicationEnabled") {
        pipeline.deduplication = boolean(v, &root.key("deduplicationEnabled"))?;
    }
    if let Some(v) = field(&doc, "overflowStrategy") {
        pipeline.overflow = choice(v, &root.key("overflowStrategy"), &OVERFLOW)?;
    }
    if let Some(v) = field(&doc, "tokenizer") {
        let at = root.key("tokenizer");
        let name = string(v, &at)?;
        pipeline.tokenizer =
            Some(crate::text::tokenizer::Tokenizer::builtin(name).map_err(|e| at.wrap(e))?);
    }
    for (key, slot) in [
        ("name", &mut pipeline.policy.name),
        ("description", &mut pipeline.policy.description),
    ] {
        if let Some(v) = field(&doc, key) {
            *slot = Some(string(v, &root.key(key))?.to_string());
        }
    }
    if let Some(v) = field(&doc, "sessionSlack") {
        let at = root.key("sessionSlack");
        let slack = number(v, &at)?;
        if !(0.0..1.0).contains(&slack) {
            return at.err(format!("must be in [0, 1) (got {slack})"));
        }
        pipeline.policy.session_slack = Some(slack);
    }
    Ok(pipeline)
}

/// A `scorers` array as one composite.
fn composite(v: &Value, at: &Path) -> Result<Scorer> {
    let entries = array(v, at)?;
    if entries.is_empty() {
        return at.err("must hold at least one scorer entry");
    }
    let mut children = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        children.push(scorer_entry(e, &at.index(i), true)?);
    }
    Scorer::composite(children).map_err(|e| at.wrap(e))
}

/// Reads a weight: finite and > 0.
fn weight(obj: &Map<String, Value>, at: &Path) -> Result<f64> {
    let at = at.key("weight");
    let Some(v) = field(obj, "weight") else {
        return at.err("required: every scorer entry has a weight");
    };
    let w = number(v, &at)?;
    if !w.is_finite() || w <= 0.0 {
        return at.err(format!("must be positive and finite (got {w})"));
    }
    Ok(w)
}

/// A `{ kind-or-tag: weight }` object as (name, weight) pairs.
fn weights(v: &Value, at: &Path) -> Result<Vec<(String, f64)>> {
    let obj = object(v, at)?;
    let mut out = Vec::with_capacity(obj.len());
    for (k, w) in obj {
        out.push((k.clone(), number(w, &at.key(k))?));
    }
    Ok(out)
}

/// One scorer entry (and its weight; an inner scorer's weight defaults to 1).
fn scorer_entry(v: &Value, at: &Path, top: bool) -> Result<(Scorer, f64)> {
    let obj = object(v, at)?;
    let type_at = at.key("type");
    let Some(t) = field(obj, "type") else {
        return type_at.err(format!(
            "required; known types: {}",
            SCORER_TYPES.join(", ")
        ));
    };
    let t = string(t, &type_at)?;
    let Some(kind) = SCORER_TYPES.iter().find(|k| k.eq_ignore_ascii_case(t)) else {
        return type_at.err(format!(
            "unknown scorer type {t:?}; known types: {}",
            SCORER_TYPES.join(", ")
        ));
    };
    let w = match (top, field(obj, "weight")) {
        (false, None) => 1.0,
        _ => weight(obj, at)?,
    };
    if *kind != "scaled" && field(obj, "innerScorer").is_some() {
        return at
            .key("innerScorer")
            .err("only valid when type is \"scaled\"");
    }
    let num = |key: &str, default: Option<f64>| -> Result<f64> {
        match (field(obj, key), default) {
            (Some(v), _) => number(v, &at.key(key)),
            (None, Some(d)) => Ok(d),
            (None, None) => at.key(key).err(format!("required when type is {kind:?}")),
        }
    };
    let scorer = match *kind {
        "recency" => Scorer::Recency,
        "priority" => Scorer::Priority,
        "frequency" => Scorer::Frequency,
        "reflexive" => Scorer::Reflexive,
        "given" => Scorer::Given,
        "kind" => {
            let w = match field(obj, "kindWeights") {
                Some(v) => Some(weights(v, &at.key("kindWeights"))?),
                None => None,
            };
            Scorer::kind(w).map_err(|e| at.key("kindWeights").wrap(e))?
        }
        "tag" => {
            let Some(v) = field(obj, "tagWeights") else {
                return at.key("tagWeights").err("required when type is \"tag\"");
            };
            Scorer::tag(weights(v, &at.key("tagWeights"))?)
                .map_err(|e| at.key("tagWeights").wrap(e))?
        }
        "scaled" => {
            let Some(inner) = field(obj, "innerScorer") else {
                return at
                    .key("innerScorer")
                    .err("required when type is \"scaled\"");
            };
            Scorer::Scaled(Box::new(
                scorer_entry(inner, &at.key("innerScorer"), false)?.0,
            ))
        }
        "composite" => {
            let Some(v) = field(obj, "scorers") else {
                return at.key("scorers").err("required when type is \"composite\"");
            };
            composite(v, &at.key("scorers"))?
        }
        "metadataTrust" => Scorer::metadata_trust(num("defaultScore", Some(0.5))?)
            .map_err(|e| at.key("defaultScore").wrap(e))?,
        "metadataKey" => {
            let text = |key: &str| -> Result<String> {
                match field(obj, key) {
                    Some(v) => Ok(string(v, &at.key(key))?.to_string()),
                    None => at.key(key).err("required when type is \"metadataKey\""),
                }
            };
            Scorer::metadata_key(&text("key")?, &text("value")?, num("boost", None)?)
                .map_err(|e| at.wrap(e))?
        }
        _ => decay(obj, at)?,
    };
    Ok((scorer, w))
}

const CURVES: [(&str, u8); 3] = [("exponential", 0), ("window", 1), ("step", 2)];

/// A decay entry: `curve`, `halfLifeSeconds` / `maxAgeSeconds` / `windows`
/// (`[{ "maxAgeSeconds", "score" }]`), `referenceUnixMillis`,
/// `nullTimestampScore` (default 0.5).
fn decay(obj: &Map<String, Value>, at: &Path) -> Result<Scorer> {
    let Some(c) = field(obj, "curve") else {
        return at.key("curve").err("required when type is \"decay\"");
    };
    let need = |key: &str| -> Result<&Value> {
        match field(obj, key) {
            Some(v) => Ok(v),
            None => at.key(key).err("required for this decay curve"),
        }
    };
    let curve = match choice(c, &at.key("curve"), &CURVES)? {
        0 => Curve::Exponential {
            half_life_secs: number(need("halfLifeSeconds")?, &at.key("halfLifeSeconds"))?,
        },
        1 => Curve::Window {
            max_age_secs: number(need("maxAgeSeconds")?, &at.key("maxAgeSeconds"))?,
        },
        _ => {
            let wat = at.key("windows");
            let list = array(need("windows")?, &wat)?;
            let mut windows = Vec::with_capacity(list.len());
            for (k, w) in list.iter().enumerate() {
                let wat = wat.index(k);
                let o = object(w, &wat)?;
                let get = |key: &str| match field(o, key) {
                    Some(v) => number(v, &wat.key(key)),
                    None => wat.key(key).err("required in a decay window"),
                };
                windows.push((get("maxAgeSeconds")?, get("score")?));
            }
            Curve::Step { windows }
        }
    };
    let reference = match field(obj, "referenceUnixMillis") {
        Some(v) => integer(v, &at.key("referenceUnixMillis"))?,
        None => {
            return at
                .key("referenceUnixMillis")
                .err("required when type is \"decay\" (there is no clock in the library)")
        }
    };
    let null_score = match field(obj, "nullTimestampScore") {
        Some(v) => number(v, &at.key("nullTimestampScore"))?,
        None => 0.5,
    };
    Ok(Scorer::Decay(
        Decay::new(curve, reference, null_score).map_err(|e| at.wrap(e))?,
    ))
}

/// A row of an array of objects that each name a `kind`: its object, its
/// path and its kind.
type Kinded<'a> = (&'a Map<String, Value>, Path, String);

/// The rows of an array of objects that each name a `kind` (`what` says
/// which for the message).
fn kinded<'a>(v: &'a Value, at: &Path, what: &str) -> Result<Vec<Kinded<'a>>> {
    let list = array(v, at)?;
    let mut rows = Vec::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        let at = at.index(i);
        let o = object(e, &at)?;
        let kind = match field(o, "kind") {
            Some(v) => string(v, &at.key("kind"))?.to_string(),
            None => return at.key("kind").err(format!("required in {what}")),
        };
        rows.push((o, at, kind));
    }
    Ok(rows)
}

/// The `quotas` array: `{ "kind", "minPercent", "maxPercent" }`.
fn quotas(v: &Value, at: &Path) -> Result<Vec<QuotaEntry>> {
    let mut out = Vec::new();
    for (o, at, kind) in kinded(v, at, "a quota")? {
        let percent = |key: &str| -> Result<Option<f64>> {
            let Some(v) = field(o, key) else {
                return Ok(None);
            };
            let p = number(v, &at.key(key))?;
            if !(0.0..=100.0).contains(&p) {
                return at.key(key).err(format!("must be in [0, 100] (got {p})"));
            }
            Ok(Some(p))
        };
        let (min, max) = (percent("minPercent")?, percent("maxPercent")?);
        if min.is_none() && max.is_none() {
            return at.err("a quota needs minPercent, maxPercent or both");
        }
        let (min, max) = (min.unwrap_or(0.0), max.unwrap_or(100.0));
        if min > max {
            return at.err(format!("minPercent {min} exceeds maxPercent {max}"));
        }
        out.push(QuotaEntry {
            kind,
            require_percent: min,
            cap_percent: max,
        });
    }
    Ok(out)
}

/// The `countQuotas` array: `{ "kind", "require", "cap" }`.
fn count_quotas(v: &Value, at: &Path) -> Result<Vec<CountEntry>> {
    let mut out = Vec::new();
    for (o, at, kind) in kinded(v, at, "a count quota")? {
        let count = |key: &str, default: Option<u32>| -> Result<u32> {
            let Some(v) = field(o, key) else {
                return default.map_or_else(|| at.key(key).err("required in a count quota"), Ok);
            };
            let n = integer(v, &at.key(key))?;
            u32::try_from(n).or_else(|_| {
                at.key(key)
                    .err(format!("must be an integer in [0, 4294967295] (got {n})"))
            })
        };
        let require = count("require", Some(0))?;
        let cap = count("cap", Some(u32::MAX))?;
        out.push(CountEntry { kind, require, cap });
    }
    Ok(out)
}

/// Writes `pipeline` as a policy document (every setting), or
/// `Error::Unsupported` for a pipeline the format cannot hold.
pub fn pipeline_to_json(pipeline: &Pipeline) -> Result<String> {
    let mut doc = Map::new();
    let scorers = match &pipeline.scorer {
        Some(Scorer::Composite(children, configured)) => entries(children, configured)?,
        Some(other) => vec![entry(other, 1.0)?],
        None => vec![json!({"type": "given", "weight": 1.0})],
    };
    doc.insert("scorers".into(), scorers.into());
    write_slicer(&pipeline.engine.slicer, &mut doc)?;
    if pipeline.engine.memory_limit != DEFAULT_MEMORY_LIMIT {
        doc.insert(
            "memoryLimitBytes".into(),
            (pipeline.engine.memory_limit as u64).into(),
        );
    }
    let placer = PLACER_TYPES
        .iter()
        .find(|(_, p)| *p == pipeline.placer)
        .map_or("none", |(n, _)| n);
    doc.insert("placerType".into(), placer.into());
    doc.insert("deduplicationEnabled".into(), pipeline.deduplication.into());
    let overflow = OVERFLOW
        .iter()
        .find(|(_, o)| *o == pipeline.overflow)
        .map_or("throw", |(n, _)| n);
    doc.insert("overflowStrategy".into(), overflow.into());
    if let Some(t) = &pipeline.tokenizer {
        let Some(name) = t.name() else {
            return Err(Error::Unsupported(
                "pipeline: its tokenizer was loaded from a vocabulary file, which a policy \
                 document cannot name (only \"o200k_base\" and \"cl100k_base\")"
                    .into(),
            ));
        };
        doc.insert("tokenizer".into(), name.into());
    }
    let extras = &pipeline.policy;
    if let Some(n) = &extras.name {
        doc.insert("name".into(), n.clone().into());
    }
    if let Some(d) = &extras.description {
        doc.insert("description".into(), d.clone().into());
    }
    if let Some(s) = extras.session_slack {
        doc.insert("sessionSlack".into(), s.into());
    }
    serde_json::to_string_pretty(&Value::Object(doc))
        .map_err(|e| Error::Internal(format!("writing the policy: {e}")))
}

fn entries(children: &[(Scorer, f64)], configured: &[f64]) -> Result<Vec<Value>> {
    children
        .iter()
        .zip(configured)
        .map(|((s, _), &w)| entry(s, w))
        .collect()
}

fn weights_object(pairs: &[(String, f64)]) -> Result<Value> {
    let mut m = Map::new();
    for (k, w) in pairs {
        if m.insert(k.clone(), (*w).into()).is_some() {
            return Err(Error::Unsupported(format!(
                "pipeline: weight key {k:?} twice, which a JSON object cannot hold"
            )));
        }
    }
    Ok(m.into())
}

/// One scorer as an entry with `weight`.
fn entry(s: &Scorer, weight: f64) -> Result<Value> {
    let mut m = Map::new();
    let t = match s {
        Scorer::Given => "given",
        Scorer::Recency => "recency",
        Scorer::Priority => "priority",
        Scorer::Frequency => "frequency",
        Scorer::Reflexive => "reflexive",
        Scorer::Kind(w) => {
            m.insert("kindWeights".into(), weights_object(w)?);
            "kind"
        }
        Scorer::Tag(w) => {
            m.insert("tagWeights".into(), weights_object(w)?);
            "tag"
        }
        Scorer::Scaled(inner) => {
            m.insert("innerScorer".into(), entry(inner, 1.0)?);
            "scaled"
        }
        Scorer::Composite(children, configured) => {
            m.insert("scorers".into(), entries(children, configured)?.into());
            "composite"
        }
        Scorer::MetadataTrust(d) => {
            m.insert("defaultScore".into(), (*d).into());
            "metadataTrust"
        }
        Scorer::MetadataKey { key, value, boost } => {
            m.insert("key".into(), key.clone().into());
            m.insert("value".into(), value.clone().into());
            m.insert("boost".into(), (*boost).into());
            "metadataKey"
        }
        Scorer::Decay(d) => {
            match &d.curve {
                Curve::Exponential { half_life_secs } => {
                    m.insert("curve".into(), "exponential".into());
                    m.insert("halfLifeSeconds".into(), (*half_life_secs).into());
                }
                Curve::Window { max_age_secs } => {
                    m.insert("curve".into(), "window".into());
                    m.insert("maxAgeSeconds".into(), (*max_age_secs).into());
                }
                Curve::Step { windows } => {
                    m.insert("curve".into(), "step".into());
                    let w: Vec<Value> = windows
                        .iter()
                        .map(|(a, s)| json!({"maxAgeSeconds": a, "score": s}))
                        .collect();
                    m.insert("windows".into(), w.into());
                }
            }
            m.insert("referenceUnixMillis".into(), d.reference_unix_millis.into());
            m.insert("nullTimestampScore".into(), d.null_timestamp_score.into());
            "decay"
        }
    };
    m.insert("type".into(), t.into());
    m.insert("weight".into(), weight.into());
    Ok(m.into())
}

fn unsupported(slicer: &Slicer) -> Error {
    Error::Unsupported(format!(
        "pipeline: its slicer ({}) nests decorators in a way a policy document cannot hold \
         (it holds count quotas around quotas around greedy, knapsack or stream)",
        slicer.name()
    ))
}

/// The slicer keys of a document: count quotas around quotas around a base.
fn write_slicer(slicer: &Slicer, doc: &mut Map<String, Value>) -> Result<()> {
    let mut s = slicer;
    if let Slicer::CountQuota(c) | Slicer::CountKnapsack(c) = s {
        let rows: Vec<Value> = c
            .entries()
            .iter()
            .map(|e| json!({"kind": e.kind, "require": e.require, "cap": e.cap}))
            .collect();
        doc.insert("countQuotas".into(), rows.into());
        let scarcity = SCARCITY
            .iter()
            .find(|(_, v)| *v == c.scarcity())
            .map_or("degrade", |(n, _)| n);
        doc.insert("scarcity".into(), scarcity.into());
        if let (Slicer::CountKnapsack(_), Some(bucket)) = (s, c.knapsack_bucket()) {
            doc.insert("slicerType".into(), "countConstrainedKnapsack".into());
            doc.insert("knapsackBucketSize".into(), bucket.into());
            return Ok(());
        }
        s = &c.inner;
    }
    if let Slicer::Quota(q) = s {
        let rows: Vec<Value> = q
            .entries()
            .iter()
            .map(|e| {
                json!({"kind": e.kind, "minPercent": e.require_percent, "maxPercent": e.cap_percent})
            })
            .collect();
        doc.insert("quotas".into(), rows.into());
        s = &q.inner;
    }
    match s {
        Slicer::Greedy => {
            doc.insert("slicerType".into(), "greedy".into());
        }
        Slicer::Knapsack(k) => {
            doc.insert("slicerType".into(), "knapsack".into());
            doc.insert("knapsackBucketSize".into(), k.bucket_size.into());
        }
        Slicer::Stream(b) if !doc.contains_key("quotas") && !doc.contains_key("countQuotas") => {
            doc.insert("slicerType".into(), "stream".into());
            doc.insert("streamBatchSize".into(), (*b as u64).into());
        }
        _ => return Err(unsupported(slicer)),
    }
    Ok(())
}

/// Reads a budget document: `maxTokens`, `targetTokens` (both required),
/// `outputReserve`, `reservedSlots` (`{ kind: tokens }`),
/// `estimationSafetyMarginPercent`.
pub fn budget_from_json(bytes: &[u8]) -> Result<Budget> {
    let doc = json::parse_object(bytes, "budget")?;
    let root = Path::root();
    let int = |key: &str| -> Result<Option<i64>> {
        field(&doc, key)
            .map(|v| integer(v, &root.key(key)))
            .transpose()
    };
    let Some(max) = int("maxTokens")? else {
        return root.key("maxTokens").err("required");
    };
    let Some(target) = int("targetTokens")? else {
        return root.key("targetTokens").err("required");
    };
    if max < 0 {
        return root
            .key("maxTokens")
            .err(format!("must be >= 0 (got {max})"));
    }
    if target < 0 {
        return root
            .key("targetTokens")
            .err(format!("must be >= 0 (got {target})"));
    }
    if target > max {
        return root
            .key("targetTokens")
            .err(format!("{target} exceeds maxTokens {max}"));
    }
    let mut budget = Budget::new(max, target).map_err(|e| root.wrap(e))?;
    if let Some(r) = int("outputReserve")? {
        budget
            .set_output_reserve(r)
            .map_err(|e| root.key("outputReserve").wrap(e))?;
    }
    if let Some(v) = field(&doc, "reservedSlots") {
        let at = root.key("reservedSlots");
        for (kind, t) in object(v, &at)? {
            let tokens = integer(t, &at.key(kind))?;
            budget
                .reserve(kind, tokens)
                .map_err(|e| at.key(kind).wrap(e))?;
        }
    }
    if let Some(v) = field(&doc, "estimationSafetyMarginPercent") {
        let at = root.key("estimationSafetyMarginPercent");
        budget
            .set_safety_margin(number(v, &at)?)
            .map_err(|e| at.wrap(e))?;
    }
    Ok(budget)
}

/// Writes a budget document with every field.
pub fn budget_to_json(budget: &Budget) -> String {
    let mut slots = Map::new();
    for (kind, tokens) in budget.reserved_slots() {
        slots.insert(kind.clone(), (*tokens).into());
    }
    let doc = json!({
        "maxTokens": budget.max_tokens(),
        "targetTokens": budget.target_tokens(),
        "outputReserve": budget.output_reserve(),
        "reservedSlots": slots,
        "estimationSafetyMarginPercent": budget.safety_margin_percent(),
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}
