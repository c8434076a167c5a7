//! Analytics (`spec/cupel/analytics/`): the SelectionReport's figures
//! (budget utilization, kind diversity, timestamp coverage, quota
//! utilization) and policy sensitivity.

use std::collections::HashSet;

use crate::budget::Budget;
use crate::error::{invalid, Result};
use crate::items::Items;
use crate::pipeline::{Pipeline, Report};
use crate::slicer::Slicer;

/// Included tokens (as they go into the context) over `max_tokens`; 0 when
/// `max_tokens` is 0 (the peers return NaN there).
pub fn budget_utilization(report: &Report) -> f64 {
    if report.max_tokens <= 0 {
        return 0.0;
    }
    let tokens = report
        .included
        .iter()
        .fold(0i64, |acc, d| acc.saturating_add(d.added_tokens));
    tokens as f64 / report.max_tokens as f64
}

/// Checks that every item the report names is in `items`.
pub fn check_items(report: &Report, items: &Items) -> Result<()> {
    let n = items.len();
    let all = report.included.iter().chain(&report.excluded);
    if let Some(d) = all.clone().find(|d| d.item as usize >= n) {
        return invalid!(
            "items holds {n} items, but the report names item {}: pass the list the report was made from",
            d.item
        );
    }
    Ok(())
}

/// Distinct kinds among the included items, compared as kinds are (ASCII
/// case-insensitively).
pub fn kind_diversity(report: &Report, items: &Items) -> Result<usize> {
    check_items(report, items)?;
    let kinds: HashSet<String> = report
        .included
        .iter()
        .map(|d| crate::kind::fold(items.kind_name(d.item)))
        .collect();
    Ok(kinds.len())
}

/// The share of included items that have a timestamp (0 when none is).
pub fn timestamp_coverage(report: &Report, items: &Items) -> Result<f64> {
    check_items(report, items)?;
    if report.included.is_empty() {
        return Ok(0.0);
    }
    let stamped = report
        .included
        .iter()
        .filter(|d| items.timestamp(d.item).is_some())
        .count();
    Ok(stamped as f64 / report.included.len() as f64)
}

/// One quota constraint's use in a run (the report JSON's
/// `analytics.quotas`).
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaRow {
    /// The kind as configured.
    pub kind: String,
    /// "percentage" (QuotaSlice) or "count" (the count-based slicers).
    pub mode: &'static str,
    /// Percent of the effective target, or items.
    pub require: f64,
    pub cap: f64,
    /// What the included unpinned items of that kind took, in the same unit.
    pub actual: f64,
    /// `actual / cap`, clamped to [0, 1] (0 when the cap is 0).
    pub utilization: f64,
}

/// The quota rows of a run of `slicer` (empty without quotas): every
/// QuotaSlice and count-quota entry in the slicer tree, outermost first.
pub fn quota_rows(slicer: &Slicer, items: &Items, report: &Report) -> Vec<QuotaRow> {
    let mut rows = Vec::new();
    let of_kind = |kind: &str| {
        let folded = crate::kind::fold(kind);
        report
            .included
            .iter()
            .filter(|d| d.reason != crate::pipeline::Reason::Pinned)
            .filter(move |d| crate::kind::fold(items.kind_name(d.item)) == folded)
    };
    let row = |kind: &str, mode, require, cap, actual: f64| QuotaRow {
        kind: kind.to_string(),
        mode,
        require,
        cap,
        actual,
        utilization: if cap > 0.0 {
            (actual / cap).clamp(0.0, 1.0)
        } else {
            0.0
        },
    };
    let target = report.outcome.effective_target;
    let mut next = Some(slicer);
    while let Some(s) = next {
        next = match s {
            Slicer::Quota(q) => {
                for e in q.entries() {
                    let tokens =
                        of_kind(&e.kind).fold(0i64, |a, d| a.saturating_add(d.added_tokens));
                    let actual = match target {
                        t if t > 0 => tokens as f64 * 100.0 / t as f64,
                        _ => 0.0,
                    };
                    rows.push(row(
                        &e.kind,
                        "percentage",
                        e.require_percent,
                        e.cap_percent,
                        actual,
                    ));
                }
                Some(&*q.inner)
            }
            Slicer::CountQuota(c) | Slicer::CountKnapsack(c) => {
                for e in c.entries() {
                    let actual = of_kind(&e.kind).count() as f64;
                    rows.push(row(
                        &e.kind,
                        "count",
                        e.require as f64,
                        e.cap as f64,
                        actual,
                    ));
                }
                Some(&*c.inner)
            }
            _ => None,
        };
    }
    rows
}

/// The figures as the report JSON's `analytics` object.
pub fn json(report: &Report, items: &Items) -> serde_json::Value {
    let quotas: Vec<serde_json::Value> = report
        .quotas
        .iter()
        .map(|q| {
            serde_json::json!({
                "kind": q.kind,
                "mode": q.mode,
                "require": q.require,
                "cap": q.cap,
                "actual": q.actual,
                "utilization": q.utilization,
            })
        })
        .collect();
    let mut m = serde_json::Map::new();
    m.insert(
        "budgetUtilization".into(),
        budget_utilization(report).into(),
    );
    m.insert(
        "kindDiversity".into(),
        kind_diversity(report, items).unwrap_or(0).into(),
    );
    m.insert(
        "timestampCoverage".into(),
        timestamp_coverage(report, items).unwrap_or(0.0).into(),
    );
    if !quotas.is_empty() {
        m.insert("quotas".into(), quotas.into());
    }
    m.into()
}

/// Policy sensitivity (`analytics/policy-sensitivity.md`): every pipeline
/// on the same items and budget. The labelled reports in order, and the
/// items some variant includes and another excludes, by push index in push
/// order (matched by item, never by content), each with its inclusion under
/// every label.
pub struct Sensitivity {
    pub variants: Vec<(String, Report)>,
    /// (item, included under each variant in order).
    pub diffs: Vec<(u32, Vec<bool>)>,
}

pub fn sensitivity(
    variants: &[(&str, &Pipeline)],
    items: &Items,
    budget: &Budget,
) -> Result<Sensitivity> {
    if variants.len() < 2 {
        return invalid!(
            "count is {}; a sensitivity comparison needs at least two variants",
            variants.len()
        );
    }
    let mut reports = Vec::with_capacity(variants.len());
    for (k, (label, pipeline)) in variants.iter().enumerate() {
        let mut report = Report::default();
        pipeline
            .run(items, budget, Some(&mut report))
            .map_err(|e| e.map_message(|m| format!("variant {k} ({label:?}) failed: {m}")))?;
        reports.push((label.to_string(), report));
    }
    let n = items.len();
    let mut included = vec![vec![false; variants.len()]; n];
    for (k, (_, r)) in reports.iter().enumerate() {
        for d in &r.included {
            included[d.item as usize][k] = true;
        }
    }
    let diffs = included
        .into_iter()
        .enumerate()
        .filter(|(_, by)| by.iter().any(|&b| b) && by.iter().any(|&b| !b))
        .map(|(i, by)| (i as u32, by))
        .collect();
    Ok(Sensitivity {
        variants: reports,
        diffs,
    })
}

impl Sensitivity {
    /// `{"variants": [{"label", "report"}], "diffs": [{"index", "content",
    /// "statuses": [{"label", "status"}]}]}`; statuses are "Included" or
    /// "Excluded" (the spec's ItemStatus). The reports' stage durations
    /// are written as 0, so that the text depends on the inputs only (a
    /// caller asking for its length first gets a length that fits).
    pub fn json(&self, items: &Items) -> serde_json::Value {
        let variants: Vec<serde_json::Value> = self
            .variants
            .iter()
            .map(|(label, r)| {
                let mut r = r.clone();
                for e in &mut r.events {
                    e.duration_ms = 0.0;
                }
                serde_json::json!({"label": label, "report": r.json_value(items)})
            })
            .collect();
        let diffs: Vec<serde_json::Value> = self
            .diffs
            .iter()
            .map(|(i, by)| {
                let statuses: Vec<serde_json::Value> = self
                    .variants
                    .iter()
                    .zip(by)
                    .map(|((label, _), &inc)| {
                        let status = if inc { "Included" } else { "Excluded" };
                        serde_json::json!({"label": label, "status": status})
                    })
                    .collect();
                let mut m = serde_json::Map::new();
                m.insert("index".into(), (*i).into());
                if let Some(c) = items.content(*i) {
                    m.insert("content".into(), c.into());
                }
                m.insert("statuses".into(), statuses.into());
                serde_json::Value::Object(m)
            })
            .collect();
        serde_json::json!({"variants": variants, "diffs": diffs})
    }
}
