//! The pipeline oracle: a case of every ContextItem field, scorer,
//! slicer, placer and pipeline setting, run through libcupel's C ABI
//! (`ours`) and through the `cupel` 1.2.0 crate's `Pipeline` (`theirs`),
//! and `compare` with the crate's departures from the specification
//! accounted for (see `DEPARTURES`). Shared by tests/differential_pipeline.rs
//! (seeded random cases) and the `versus_reference` fuzz target.

#![allow(dead_code)]

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::ptr;

use chrono::{TimeZone, Utc};
use cupel::ffi::*;
use cupel_ref as r;
use r::diagnostics::trace_collector::{DiagnosticTraceCollector, TraceDetailLevel};
use r::diagnostics::{ExclusionReason, InclusionReason};

/// The reference time of the decay scorers: 2025-01-01T12:00:00Z.
pub const REFERENCE_MS: i64 = 1_735_732_800_000;

#[derive(Debug, Clone)]
pub struct Item {
    pub content: String,
    pub tokens: i64,
    pub kind: String,
    pub timestamp: Option<i64>,
    pub priority: Option<i64>,
    pub pinned: bool,
    pub hint: Option<f64>,
    pub tags: Vec<String>,
    pub metadata: Vec<(String, String)>,
    /// Keep-together group (0: none); the crate has no groups, so the
    /// differential cases leave it 0.
    pub group: u64,
}

#[derive(Debug, Clone)]
pub enum ScorerSpec {
    Recency,
    Priority,
    Kind(Option<Vec<(String, f64)>>),
    Tag(Vec<(String, f64)>),
    Frequency,
    Reflexive,
    Composite(Vec<(ScorerSpec, f64)>),
    Scaled(Box<ScorerSpec>),
    Trust(f64),
    Key(String, String, f64),
    Decay(u8, f64, Vec<(f64, f64)>, f64),
}

#[derive(Debug, Clone)]
pub enum SlicerSpec {
    Greedy,
    Knapsack(i64),
    Quota(Vec<(String, f64, f64)>),
    CountQuota(Vec<(String, u32, u32)>),
    CountKnapsack(i64, Vec<(String, u32, u32)>),
}

#[derive(Debug, Clone)]
pub struct Case {
    pub items: Vec<Item>,
    pub scorer: ScorerSpec,
    pub slicer: SlicerSpec,
    pub u_shaped: bool,
    pub dedup: bool,
    pub overflow: i32,
    pub max: i64,
    pub target: i64,
    pub reserve: i64,
}

struct FixedTime;
impl r::scorer::TimeProvider for FixedTime {
    fn now(&self) -> chrono::DateTime<Utc> {
        Utc.timestamp_millis_opt(REFERENCE_MS).unwrap()
    }
}

fn secs(s: f64) -> chrono::TimeDelta {
    chrono::TimeDelta::milliseconds((s * 1000.0) as i64)
}

fn their_scorer(s: &ScorerSpec) -> Box<dyn r::scorer::Scorer> {
    match s {
        ScorerSpec::Recency => Box::new(r::scorer::RecencyScorer),
        ScorerSpec::Priority => Box::new(r::scorer::PriorityScorer),
        ScorerSpec::Kind(None) => Box::new(r::scorer::KindScorer::with_default_weights()),
        ScorerSpec::Kind(Some(w)) => Box::new(
            r::scorer::KindScorer::new(
                w.iter()
                    .map(|(k, v)| (r::model::ContextKind::new(k).unwrap(), *v))
                    .collect(),
            )
            .unwrap(),
        ),
        ScorerSpec::Tag(w) => {
            Box::new(r::scorer::TagScorer::new(w.iter().cloned().collect()).unwrap())
        }
        ScorerSpec::Frequency => Box::new(r::scorer::FrequencyScorer),
        ScorerSpec::Reflexive => Box::new(r::scorer::ReflexiveScorer),
        ScorerSpec::Composite(c) => Box::new(
            r::scorer::CompositeScorer::new(c.iter().map(|(s, w)| (their_scorer(s), *w)).collect())
                .unwrap(),
        ),
        ScorerSpec::Scaled(inner) => Box::new(r::scorer::ScaledScorer::new(their_scorer(inner))),
        ScorerSpec::Trust(d) => Box::new(r::scorer::MetadataTrustScorer::new(*d).unwrap()),
        ScorerSpec::Key(k, v, b) => Box::new(r::scorer::MetadataKeyScorer::new(k, v, *b).unwrap()),
        ScorerSpec::Decay(curve, d, windows, null) => {
            let curve = match curve {
                0 => r::scorer::DecayCurve::exponential(secs(*d)).unwrap(),
                1 => r::scorer::DecayCurve::step(
                    windows.iter().map(|&(a, s)| (secs(a), s)).collect(),
                )
                .unwrap(),
                _ => r::scorer::DecayCurve::window(secs(*d)).unwrap(),
            };
            Box::new(r::scorer::DecayScorer::new(Box::new(FixedTime), curve, *null).unwrap())
        }
    }
}

fn their_slicer(s: &SlicerSpec) -> Box<dyn r::slicer::Slicer> {
    let counts = |e: &[(String, u32, u32)]| -> Vec<r::slicer::CountQuotaEntry> {
        e.iter()
            .map(|(k, req, cap)| {
                r::slicer::CountQuotaEntry::new(
                    r::model::ContextKind::new(k).unwrap(),
                    *req as usize,
                    *cap as usize,
                )
                .unwrap()
            })
            .collect()
    };
    match s {
        SlicerSpec::Greedy => Box::new(r::slicer::GreedySlice),
        SlicerSpec::Knapsack(b) => Box::new(r::slicer::KnapsackSlice::new(*b).unwrap()),
        SlicerSpec::Quota(q) => Box::new(
            r::slicer::QuotaSlice::new(
                q.iter()
                    .map(|(k, req, cap)| {
                        r::slicer::QuotaEntry::new(
                            r::model::ContextKind::new(k).unwrap(),
                            *req,
                            *cap,
                        )
                        .unwrap()
                    })
                    .collect(),
                Box::new(r::slicer::GreedySlice),
            )
            .unwrap(),
        ),
        SlicerSpec::CountQuota(e) => Box::new(
            r::slicer::CountQuotaSlice::new(
                counts(e),
                Box::new(r::slicer::GreedySlice),
                r::slicer::ScarcityBehavior::Degrade,
            )
            .unwrap(),
        ),
        SlicerSpec::CountKnapsack(b, e) => Box::new(
            r::slicer::CountConstrainedKnapsackSlice::new(
                counts(e),
                r::slicer::KnapsackSlice::new(*b).unwrap(),
                r::slicer::ScarcityBehavior::Degrade,
            )
            .unwrap(),
        ),
    }
}

/// A decision as both sides report it: item index, score, reason name,
/// and the reason's data (tokens, or the content of the related item: the
/// crate names it by content, which duplicates make ambiguous as an index).
pub type Decided = (usize, f64, String, i64, i64, Option<String>);

/// A run's placed item indices, included and excluded decisions.
pub type Run = (Vec<usize>, Vec<Decided>, Vec<Decided>);

fn idx(item: &r::model::ContextItem) -> usize {
    item.metadata()["_idx"].parse().unwrap()
}

pub fn theirs(c: &Case) -> Result<Run, String> {
    let items: Vec<r::model::ContextItem> = c
        .items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let mut meta: HashMap<String, String> = it.metadata.iter().cloned().collect();
            meta.insert("_idx".into(), i.to_string());
            let mut b = r::model::ContextItemBuilder::new(&it.content, it.tokens)
                .kind(r::model::ContextKind::new(&it.kind).unwrap())
                .tags(it.tags.clone())
                .metadata(meta)
                .pinned(it.pinned);
            if let Some(t) = it.timestamp {
                b = b.timestamp(Utc.timestamp_millis_opt(t).unwrap());
            }
            if let Some(p) = it.priority {
                b = b.priority(p);
            }
            if let Some(h) = it.hint {
                b = b.future_relevance_hint(h);
            }
            b.build().unwrap()
        })
        .collect();
    let placer: Box<dyn r::placer::Placer> = if c.u_shaped {
        Box::new(r::placer::UShapedPlacer)
    } else {
        Box::new(r::placer::ChronologicalPlacer)
    };
    let overflow = [
        r::model::OverflowStrategy::Throw,
        r::model::OverflowStrategy::Truncate,
        r::model::OverflowStrategy::Proceed,
    ][c.overflow as usize];
    let pipeline = r::pipeline::Pipeline::builder()
        .scorer(their_scorer(&c.scorer))
        .slicer(their_slicer(&c.slicer))
        .placer(placer)
        .deduplication(c.dedup)
        .overflow_strategy(overflow)
        .build()
        .map_err(|e| e.to_string())?;
    let budget = r::model::ContextBudget::new(c.max, c.target, c.reserve, HashMap::new(), 0.0)
        .map_err(|e| e.to_string())?;
    let mut collector = DiagnosticTraceCollector::new(TraceDetailLevel::Item);
    let out = pipeline
        .run_traced(&items, &budget, &mut collector)
        .map_err(|e| e.to_string())?;
    let report = collector.into_report();
    let by_content = |s: &str| Some(s.to_string());
    let included = report
        .included
        .iter()
        .map(|d| {
            let name = match d.reason {
                InclusionReason::Scored => "Scored",
                InclusionReason::Pinned => "Pinned",
                InclusionReason::ZeroToken => "ZeroToken",
                _ => "other",
            };
            (
                idx(&d.item),
                d.score,
                name.to_string(),
                d.item.tokens(),
                0,
                None,
            )
        })
        .collect();
    let excluded = report
        .excluded
        .iter()
        .map(|d| {
            let i = idx(&d.item);
            let t = d.item.tokens();
            match &d.reason {
                ExclusionReason::BudgetExceeded {
                    item_tokens,
                    available_tokens,
                } => (
                    i,
                    d.score,
                    "BudgetExceeded".into(),
                    *item_tokens,
                    *available_tokens,
                    None,
                ),
                ExclusionReason::Deduplicated {
                    deduplicated_against,
                } => (
                    i,
                    d.score,
                    "Deduplicated".into(),
                    t,
                    0,
                    by_content(deduplicated_against),
                ),
                ExclusionReason::NegativeTokens { tokens } => {
                    (i, d.score, "NegativeTokens".into(), *tokens, 0, None)
                }
                ExclusionReason::PinnedOverride { displaced_by } => (
                    i,
                    d.score,
                    "PinnedOverride".into(),
                    t,
                    0,
                    by_content(displaced_by),
                ),
                ExclusionReason::CountCapExceeded { .. } => {
                    (i, d.score, "CountCapExceeded".into(), t, 0, None)
                }
                other => (i, d.score, format!("{other:?}"), t, 0, None),
            }
        })
        .collect();
    Ok((out.iter().map(idx).collect(), included, excluded))
}

// ---- our side, through the C ABI ----------------------------------------

fn ok(s: cupel_status) {
    assert_eq!(s, CUPEL_OK, "{:?}", unsafe {
        CStr::from_ptr(cupel_last_error())
    });
}

unsafe fn our_scorer(s: &ScorerSpec) -> *mut cupel_scorer {
    let mut out = ptr::null_mut();
    match s {
        ScorerSpec::Recency => ok(cupel_scorer_new_recency(&mut out)),
        ScorerSpec::Priority => ok(cupel_scorer_new_priority(&mut out)),
        ScorerSpec::Kind(None) => ok(cupel_scorer_new_kind(ptr::null(), 0, &mut out)),
        ScorerSpec::Kind(Some(w)) => {
            let names: Vec<CString> = w
                .iter()
                .map(|(k, _)| CString::new(k.as_str()).unwrap())
                .collect();
            let ws: Vec<cupel_kind_weight> = w
                .iter()
                .zip(&names)
                .map(|((_, v), n)| cupel_kind_weight {
                    kind: n.as_ptr(),
                    weight: *v,
                })
                .collect();
            ok(cupel_scorer_new_kind(ws.as_ptr(), ws.len(), &mut out))
        }
        ScorerSpec::Tag(w) => {
            let names: Vec<CString> = w
                .iter()
                .map(|(k, _)| CString::new(k.as_str()).unwrap())
                .collect();
            let ws: Vec<cupel_tag_weight> = w
                .iter()
                .zip(&names)
                .map(|((_, v), n)| cupel_tag_weight {
                    tag: n.as_ptr(),
                    weight: *v,
                })
                .collect();
            ok(cupel_scorer_new_tag(ws.as_ptr(), ws.len(), &mut out))
        }
        ScorerSpec::Frequency => ok(cupel_scorer_new_frequency(&mut out)),
        ScorerSpec::Reflexive => ok(cupel_scorer_new_reflexive(&mut out)),
        ScorerSpec::Composite(c) => {
            let children: Vec<*mut cupel_scorer> = c.iter().map(|(s, _)| our_scorer(s)).collect();
            let consts: Vec<*const cupel_scorer> =
                children.iter().map(|&p| p as *const _).collect();
            let weights: Vec<f64> = c.iter().map(|(_, w)| *w).collect();
            ok(cupel_scorer_new_composite(
                consts.as_ptr(),
                weights.as_ptr(),
                c.len(),
                &mut out,
            ));
            children.into_iter().for_each(|p| cupel_scorer_free(p));
        }
        ScorerSpec::Scaled(inner) => {
            let i = our_scorer(inner);
            ok(cupel_scorer_new_scaled(i, &mut out));
            cupel_scorer_free(i);
        }
        ScorerSpec::Trust(d) => ok(cupel_scorer_new_metadata_trust(*d, &mut out)),
        ScorerSpec::Key(k, v, b) => {
            let (k, v) = (
                CString::new(k.as_str()).unwrap(),
                CString::new(v.as_str()).unwrap(),
            );
            ok(cupel_scorer_new_metadata_key(
                k.as_ptr(),
                v.as_ptr(),
                *b,
                &mut out,
            ))
        }
        ScorerSpec::Decay(curve, d, windows, null) => {
            let ws: Vec<cupel_decay_window> = windows
                .iter()
                .map(|&(a, s)| cupel_decay_window {
                    max_age_secs: a,
                    score: s,
                })
                .collect();
            ok(cupel_scorer_new_decay(
                *curve as i32,
                *d,
                ws.as_ptr(),
                ws.len(),
                REFERENCE_MS,
                *null,
                &mut out,
            ))
        }
    }
    out
}

pub unsafe fn our_slicer(s: &SlicerSpec) -> *mut cupel_slicer {
    let mut out = ptr::null_mut();
    let mut greedy = ptr::null_mut();
    ok(cupel_slicer_new_greedy(&mut greedy));
    let names = |e: &[(String, u32, u32)]| -> Vec<CString> {
        e.iter()
            .map(|(k, _, _)| CString::new(k.as_str()).unwrap())
            .collect()
    };
    match s {
        SlicerSpec::Greedy => ok(cupel_slicer_new_greedy(&mut out)),
        SlicerSpec::Knapsack(b) => ok(cupel_slicer_new_knapsack(*b, &mut out)),
        SlicerSpec::Quota(q) => {
            let n: Vec<CString> = q
                .iter()
                .map(|(k, _, _)| CString::new(k.as_str()).unwrap())
                .collect();
            let qs: Vec<cupel_quota> = q
                .iter()
                .zip(&n)
                .map(|((_, req, cap), k)| cupel_quota {
                    kind: k.as_ptr(),
                    require_percent: *req,
                    cap_percent: *cap,
                })
                .collect();
            ok(cupel_slicer_new_quota(
                greedy,
                qs.as_ptr(),
                qs.len(),
                &mut out,
            ))
        }
        SlicerSpec::CountQuota(e) | SlicerSpec::CountKnapsack(_, e) => {
            let n = names(e);
            let es: Vec<cupel_count_quota> = e
                .iter()
                .zip(&n)
                .map(|((_, req, cap), k)| cupel_count_quota {
                    kind: k.as_ptr(),
                    require_count: *req,
                    cap_count: *cap,
                })
                .collect();
            if let SlicerSpec::CountKnapsack(b, _) = s {
                ok(cupel_slicer_new_count_constrained_knapsack(
                    *b,
                    es.as_ptr(),
                    es.len(),
                    CUPEL_SCARCITY_DEGRADE as i32,
                    &mut out,
                ))
            } else {
                ok(cupel_slicer_new_count_quota(
                    greedy,
                    es.as_ptr(),
                    es.len(),
                    CUPEL_SCARCITY_DEGRADE as i32,
                    &mut out,
                ))
            }
        }
    }
    cupel_slicer_free(greedy);
    out
}

/// Our run with the report's raw decisions: (placed, included, excluded).
pub type Raw = (Vec<usize>, Vec<cupel_decision>, Vec<cupel_decision>);

pub unsafe fn ours(c: &Case) -> Result<Run, cupel_status> {
    ours_raw(c).map(|(run, _)| run)
}

/// [`ours`], and the same run with the report's decisions as the C ABI
/// gives them (group fields included).
pub unsafe fn ours_raw(c: &Case) -> Result<(Run, Raw), cupel_status> {
    let mut items = ptr::null_mut();
    ok(cupel_items_new(&mut items));
    for (i, it) in c.items.iter().enumerate() {
        let kind = CString::new(it.kind.as_str()).unwrap();
        ok(cupel_items_push(items, it.tokens, 0.0, kind.as_ptr()));
        ok(cupel_items_set_content(
            items,
            i,
            CString::new(it.content.as_str()).unwrap().as_ptr(),
        ));
        if let Some(t) = it.timestamp {
            ok(cupel_items_set_timestamp(items, i, t));
        }
        if let Some(p) = it.priority {
            ok(cupel_items_set_priority(items, i, p));
        }
        if let Some(h) = it.hint {
            ok(cupel_items_set_relevance_hint(items, i, h));
        }
        ok(cupel_items_set_pinned(items, i, it.pinned));
        if it.group != 0 {
            ok(cupel_items_set_group(items, i, it.group));
        }
        for t in &it.tags {
            ok(cupel_items_add_tag(
                items,
                i,
                CString::new(t.as_str()).unwrap().as_ptr(),
            ));
        }
        for (k, v) in &it.metadata {
            let (k, v) = (
                CString::new(k.as_str()).unwrap(),
                CString::new(v.as_str()).unwrap(),
            );
            ok(cupel_items_set_metadata(items, i, k.as_ptr(), v.as_ptr()));
        }
    }
    let scorer = our_scorer(&c.scorer);
    let slicer = our_slicer(&c.slicer);
    let mut placer = ptr::null_mut();
    if c.u_shaped {
        ok(cupel_placer_new_u_shaped(&mut placer));
    } else {
        ok(cupel_placer_new_chronological(&mut placer));
    }
    let mut pipeline = ptr::null_mut();
    ok(cupel_pipeline_new(scorer, slicer, placer, &mut pipeline));
    ok(cupel_pipeline_set_deduplication(pipeline, c.dedup));
    ok(cupel_pipeline_set_overflow(pipeline, c.overflow));
    let mut budget = ptr::null_mut();
    ok(cupel_budget_new(c.max, c.target, &mut budget));
    ok(cupel_budget_set_output_reserve(budget, c.reserve));
    let mut report = ptr::null_mut();
    ok(cupel_report_new(&mut report));
    let mut out = vec![0usize; c.items.len()];
    let mut n = 0;
    let status = cupel_pipeline_run(
        pipeline,
        items,
        budget,
        out.as_mut_ptr(),
        out.len(),
        &mut n,
        report,
    );
    let raw = |included: bool| -> Vec<cupel_decision> {
        let count = if included {
            cupel_report_included_count(report)
        } else {
            cupel_report_excluded_count(report)
        };
        (0..count)
            .map(|k| {
                let mut d = std::mem::zeroed::<cupel_decision>();
                if included {
                    ok(cupel_report_included(report, k, &mut d));
                } else {
                    ok(cupel_report_excluded(report, k, &mut d));
                }
                d
            })
            .collect()
    };
    let list = |included: bool| -> Vec<Decided> {
        raw(included)
            .into_iter()
            .map(|d| {
                let name = reason_name(d.reason);
                let related = (d.related_index != usize::MAX)
                    .then(|| c.items[d.related_index].content.clone());
                (
                    d.item_index,
                    d.score,
                    name.to_string(),
                    d.item_tokens,
                    d.available_tokens,
                    related,
                )
            })
            .collect()
    };
    let result = if status == CUPEL_OK {
        let placed = out[..n].to_vec();
        Ok((
            (placed.clone(), list(true), list(false)),
            (placed, raw(true), raw(false)),
        ))
    } else {
        Err(status)
    };
    cupel_report_free(report);
    cupel_budget_free(budget);
    cupel_pipeline_free(pipeline);
    cupel_placer_free(placer);
    cupel_slicer_free(slicer);
    cupel_scorer_free(scorer);
    cupel_items_free(items);
    result
}

fn reason_name(r: i32) -> &'static str {
    match r {
        0 => "Scored",
        1 => "Pinned",
        2 => "ZeroToken",
        10 => "BudgetExceeded",
        12 => "Deduplicated",
        15 => "NegativeTokens",
        16 => "PinnedOverride",
        18 => "CountCapExceeded",
        other => panic!("reason {other} is never reported"),
    }
}

fn same_score(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

/// Ours against theirs for one case, `Err` with the difference. Both
/// failing counts as agreeing (`Ok(false)`); `Ok(true)` when outputs and
/// decisions were compared. The departures (tests/differential_pipeline.rs
/// names them with their spec lines) are accounted for here.
pub fn compare(c: &Case) -> Result<bool, String> {
    let (mut ours, mut theirs) = match (theirs(c), unsafe { ours(c) }) {
        (Ok(t), Ok(o)) => (o, t),
        (Err(_), Err(_)) => return Ok(false),
        (t, o) => return Err(format!("crate {t:?}, libcupel {o:?}")),
    };
    let count_slicer = matches!(
        c.slicer,
        SlicerSpec::CountQuota(_) | SlicerSpec::CountKnapsack(..)
    );
    if count_slicer {
        // Departure 2: which items reach a cap or the budget on the way.
        for d in ours.2.iter_mut().chain(theirs.2.iter_mut()) {
            if ["CountCapExceeded", "BudgetExceeded", "PinnedOverride"].contains(&d.2.as_str()) {
                d.2 = "excluded by the Slice stage".into();
                d.4 = 0;
                d.5 = None;
            }
        }
    }
    if !matches!(c.slicer, SlicerSpec::Greedy | SlicerSpec::Knapsack(_)) {
        // Departure 2: the decorators' other output order.
        let key = |d: &Decided| d.0;
        for (o, t) in [(&mut ours.1, &mut theirs.1), (&mut ours.2, &mut theirs.2)] {
            o.sort_by_key(key);
            t.sort_by_key(key);
        }
        ours.0.sort_unstable();
        theirs.0.sort_unstable();
    }
    if ours.0 != theirs.0 {
        return Err(format!(
            "placed output: ours {:?}, theirs {:?}",
            ours.0, theirs.0
        ));
    }
    for (what, o, t) in [
        ("included", &ours.1, &theirs.1),
        ("excluded", &ours.2, &theirs.2),
    ] {
        if o.len() != t.len() {
            return Err(format!("{what} count\nours {o:?}\ntheirs {t:?}"));
        }
        for (a, b) in o.iter().zip(t) {
            let same = a.0 == b.0
                && same_score(a.1, b.1)
                && a.2 == b.2
                && a.3 == b.3
                && a.4 == b.4
                && a.5 == b.5;
            if !same {
                return Err(format!(
                    "{what} differ\nours   {a:?}\ntheirs {b:?}\nall ours {o:?}\nall theirs {t:?}"
                ));
            }
        }
    }
    Ok(true)
}
