//! The SelectionReport (`spec/cupel/diagnostics/`): every item either
//! included (Scored, Pinned, ZeroToken) or excluded with a data-carrying
//! reason; totals; one event per stage; and its JSON wire format.
//!
//! The stages write to a [`Log`]; when no report was asked for, the log is
//! disabled and records nothing (the null-path guarantee).

use std::collections::HashMap;

use super::slice::{Outcome, Shrunk};
use crate::group::Groups;
use crate::items::{Items, View};

/// Why an item was included or excluded. The numbers are the C ABI's
/// `cupel_reason` values and never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Reason {
    Scored = 0,
    Pinned = 1,
    ZeroToken = 2,
    /// Included as one of its variants (`crate::choice`).
    Variant = 3,
    /// Included cut down to fit (`crate::choice::fill`).
    Truncated = 4,
    BudgetExceeded = 10,
    /// Reserved by the specification: never emitted.
    ScoredTooLow = 11,
    Deduplicated = 12,
    /// Reserved by the specification: never emitted.
    QuotaCapExceeded = 13,
    /// Reserved by the specification: never emitted.
    QuotaRequireDisplaced = 14,
    NegativeTokens = 15,
    PinnedOverride = 16,
    /// Reserved by the specification: never emitted.
    Filtered = 17,
    /// A count-based slicer dropped the item: its kind reached `cap_count`.
    CountCapExceeded = 18,
    /// A session left out an item the fresh selection takes, to keep the
    /// prompt's cached prefix (`crate::session`).
    Deferred = 19,
}

impl Reason {
    pub const ALL: [Reason; 15] = [
        Reason::Scored,
        Reason::Pinned,
        Reason::ZeroToken,
        Reason::Variant,
        Reason::Truncated,
        Reason::BudgetExceeded,
        Reason::ScoredTooLow,
        Reason::Deduplicated,
        Reason::QuotaCapExceeded,
        Reason::QuotaRequireDisplaced,
        Reason::NegativeTokens,
        Reason::PinnedOverride,
        Reason::Filtered,
        Reason::CountCapExceeded,
        Reason::Deferred,
    ];

    /// The variant name of the JSON wire format.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Scored => "Scored",
            Reason::Pinned => "Pinned",
            Reason::ZeroToken => "ZeroToken",
            Reason::Variant => "Variant",
            Reason::Truncated => "Truncated",
            Reason::BudgetExceeded => "BudgetExceeded",
            Reason::ScoredTooLow => "ScoredTooLow",
            Reason::Deduplicated => "Deduplicated",
            Reason::QuotaCapExceeded => "QuotaCapExceeded",
            Reason::QuotaRequireDisplaced => "QuotaRequireDisplaced",
            Reason::NegativeTokens => "NegativeTokens",
            Reason::PinnedOverride => "PinnedOverride",
            Reason::Filtered => "Filtered",
            Reason::CountCapExceeded => "CountCapExceeded",
            Reason::Deferred => "Deferred",
        }
    }
}

/// One item's fate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub item: u32,
    /// The score the decision was made with (0.0 before the Score stage,
    /// 1.0 for a pinned item).
    pub score: f64,
    pub reason: Reason,
    pub item_tokens: i64,
    /// BudgetExceeded: the tokens that were left (0 for other reasons).
    pub available_tokens: i64,
    /// Deduplicated: the item kept; PinnedOverride: the pinned item.
    pub related: Option<u32>,
    /// The item's keep-together group id (0: none).
    pub group: u64,
    /// The tokens the decision was made on: the group's summed tokens for
    /// a grouped item, its own otherwise.
    pub group_tokens: i64,
    /// Included: the option chosen (0: the item as pushed, also when cut).
    pub variant: u8,
    /// Included: the tokens it adds to the context (`item_tokens` unless a
    /// variant or a cut).
    pub added_tokens: i64,
    /// Included and cut: the kept byte ranges `[0, head_end)` and
    /// `[tail_start, len)` of its content.
    pub cut: Option<(usize, usize)>,
    /// Included: the length of its content in bytes (0: none).
    pub content_len: usize,
    /// Excluded: the stage that excluded it (traces carry it).
    pub stage: Stage,
}

/// The stages a decision is made in (`diagnostics/events.md`'s
/// PipelineStage: Sort has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Stage {
    Classify,
    Score,
    Deduplicate,
    #[default]
    Slice,
    Place,
}

impl Stage {
    pub const ALL: [Stage; 5] = [
        Stage::Classify,
        Stage::Score,
        Stage::Deduplicate,
        Stage::Slice,
        Stage::Place,
    ];

    /// The PipelineStage name ("Classify", ...), as the report's events have it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Classify => "Classify",
            Stage::Score => "Score",
            Stage::Deduplicate => "Deduplicate",
            Stage::Slice => "Slice",
            Stage::Place => "Place",
        }
    }

    fn of(name: &str) -> Stage {
        Stage::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .unwrap_or_default()
    }
}

/// One stage-level TraceEvent.
#[derive(Debug, Clone, PartialEq)]
pub struct StageEvent {
    pub stage: &'static str,
    pub duration_ms: f64,
    pub item_count: usize,
}

/// A SelectionReport, by item index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// In final placed order.
    pub included: Vec<Decision>,
    /// By score descending, ties in the order of exclusion.
    pub excluded: Vec<Decision>,
    pub events: Vec<StageEvent>,
    /// Tokens over the target kept by the Proceed strategy (0 otherwise).
    pub tokens_over_budget: i64,
    /// The Slice stage's outcome (effective budget, count-slicer records).
    pub outcome: Outcome,
    /// A session run's action, stable prefix and breakpoints.
    pub session: Option<crate::session::Info>,
    /// The run's budget's max_tokens (budget utilization's denominator).
    pub max_tokens: i64,
    /// The quota constraints' use (`crate::analytics::quota_rows`).
    pub quotas: Vec<crate::analytics::QuotaRow>,
}

impl Report {
    pub fn total_candidates(&self) -> usize {
        self.included.len() + self.excluded.len()
    }

    /// Sum of every listed item's tokens (saturating).
    pub fn total_tokens_considered(&self) -> i64 {
        self.included
            .iter()
            .chain(&self.excluded)
            .fold(0i64, |acc, d| acc.saturating_add(d.item_tokens))
    }

    /// The report of one `cupel_slice` call (the Slice stage alone): the
    /// selection in slicer order, everything else excluded.
    /// A member of a group with a negative-token member is excluded as
    /// NegativeTokens too (no member of that group can be selected).
    pub fn of_slice(all: &Items, outcome: Outcome) -> Report {
        let (items, groups) = (all.view(), Groups::of(all));
        let mut log = Log::new(true);
        let negative =
            |i: u32| items.tokens(i) < 0 || groups.as_ref().is_some_and(|g| g.negative(i));
        for i in 0..items.len() as u32 {
            if negative(i) {
                let t = items.tokens(i);
                log.exclude(i, items.score(i), Reason::NegativeTokens, t, 0, None);
            }
        }
        let candidates: Vec<u32> = (0..items.len() as u32).filter(|&i| !negative(i)).collect();
        log.slice(items, &candidates, &outcome, None, groups.as_ref());
        // A variant keeps its share of the score, as in a pipeline run.
        let merged: Vec<(u32, f64)> = outcome
            .selected
            .iter()
            .map(|&i| {
                let shrunk = outcome.shrunk.get(&i);
                let share = crate::choice::fill::share(all, items, i, shrunk);
                (i, items.score(i) * share)
            })
            .collect();
        log.placed(&merged);
        let placed = outcome.selected.clone();
        let mut report = log.finish_with(items, &placed, outcome, groups.as_ref());
        report.set_content_lens(all);
        report
    }

    /// Each included decision's `content_len`.
    fn set_content_lens(&mut self, items: &Items) {
        for d in &mut self.included {
            d.content_len = items.content(d.item).map_or(0, str::len);
        }
    }
}

/// A stage's duration in the report's unit, milliseconds.
#[cfg(not(target_arch = "wasm32"))]
fn millis(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// What the stages record while a pipeline runs.
#[derive(Debug)]
pub struct Log {
    enabled: bool,
    excluded: Vec<Decision>,
    events: Vec<StageEvent>,
    over: i64,
    /// (item, score) of the merged list after overflow handling.
    placed_scores: Vec<(u32, f64)>,
    /// How many exclusions have their stage set.
    staged: usize,
    #[cfg(not(target_arch = "wasm32"))]
    since: std::time::Instant,
}

impl Log {
    pub fn new(enabled: bool) -> Log {
        Log {
            enabled,
            excluded: Vec::new(),
            events: Vec::new(),
            over: 0,
            placed_scores: Vec::new(),
            staged: 0,
            #[cfg(not(target_arch = "wasm32"))]
            since: std::time::Instant::now(),
        }
    }

    /// A stage finished having processed `item_count` items.
    pub fn stage(&mut self, stage: &'static str, item_count: usize) {
        if !self.enabled {
            return;
        }
        let which = Stage::of(stage);
        for d in &mut self.excluded[self.staged..] {
            d.stage = which;
        }
        self.staged = self.excluded.len();
        #[cfg(not(target_arch = "wasm32"))]
        let duration_ms = {
            let now = std::time::Instant::now();
            let ms = millis(now.duration_since(self.since));
            self.since = now;
            ms
        };
        #[cfg(target_arch = "wasm32")]
        let duration_ms = 0.0;
        self.events.push(StageEvent {
            stage,
            duration_ms,
            item_count,
        });
    }

    pub fn exclude(
        &mut self,
        item: u32,
        score: f64,
        reason: Reason,
        item_tokens: i64,
        available_tokens: i64,
        related: Option<u32>,
    ) {
        if self.enabled {
            self.excluded.push(Decision {
                item,
                score,
                reason,
                item_tokens,
                available_tokens,
                related,
                group: 0,
                group_tokens: item_tokens,
                variant: 0,
                added_tokens: 0,
                cut: None,
                content_len: 0,
                stage: Stage::default(),
            });
        }
    }

    /// The Slice stage's exclusions: candidates it did not select. With
    /// pinned items (`pinned`: the first pinned item, the pinned tokens and
    /// the room they were taken from, `target_tokens - output_reserve`), an
    /// item that fits that room but not the effective target the pinned
    /// tokens left was displaced by them: PinnedOverride
    /// (`conformance/pipeline/diag-pinned-override.toml`: "effective_target
    /// < item_tokens because pinned_tokens > 0"; the bound is the cupel
    /// crate's, checked by tests/differential_pipeline.rs); otherwise
    /// BudgetExceeded. A grouped item is judged by its group's tokens.
    pub fn slice(
        &mut self,
        items: View<'_>,
        candidates: &[u32],
        outcome: &Outcome,
        pinned: Option<(u32, i64, i64)>,
        groups: Option<&Groups>,
    ) {
        if !self.enabled {
            return;
        }
        let mut chosen = vec![false; items.len()];
        for &i in &outcome.selected {
            chosen[i as usize] = true;
        }
        let mut capped = vec![false; items.len()];
        for &i in &outcome.cap_excluded {
            capped[i as usize] = true;
        }
        let available = outcome
            .effective_target
            .saturating_sub(outcome.selected_tokens)
            .max(0);
        for &i in candidates {
            if chosen[i as usize] {
                continue;
            }
            let t = match groups {
                None => items.tokens(i),
                Some(g) => g.unit_tokens(items, i),
            };
            let (reason, left, by) = match pinned {
                _ if capped[i as usize] => (Reason::CountCapExceeded, 0, None),
                Some((first, pinned_tokens, room))
                    if pinned_tokens > 0 && t > outcome.effective_target && t <= room =>
                {
                    (Reason::PinnedOverride, 0, Some(first))
                }
                _ => (Reason::BudgetExceeded, available, None),
            };
            self.exclude(i, items.score(i), reason, items.tokens(i), left, by);
        }
        self.stage("Slice", candidates.len());
    }

    pub fn overflow(&mut self, tokens_over_budget: i64) {
        self.over = tokens_over_budget;
    }

    /// The merged (item, score) list the placer ordered.
    pub fn placed(&mut self, merged: &[(u32, f64)]) {
        if self.enabled {
            self.placed_scores = merged.to_vec();
        }
    }

    /// The report, `placed` being the final order and `pinned` the items
    /// Classify pinned.
    pub fn finish(
        self,
        items: &Items,
        placed: &[u32],
        pinned: &[u32],
        outcome: Outcome,
        groups: Option<&Groups>,
    ) -> Report {
        let mut is_pinned = vec![false; items.len()];
        for &i in pinned {
            is_pinned[i as usize] = true;
        }
        let mut report = self.finish_with(items.view(), placed, outcome, groups);
        report.set_content_lens(items);
        for d in &mut report.included {
            if is_pinned[d.item as usize] {
                d.reason = Reason::Pinned;
            }
        }
        report
    }

    fn finish_with(
        self,
        items: View<'_>,
        placed: &[u32],
        outcome: Outcome,
        groups: Option<&Groups>,
    ) -> Report {
        let score_of: HashMap<u32, f64> = self.placed_scores.iter().copied().collect();
        let included = placed
            .iter()
            .map(|&i| {
                let tokens = items.tokens(i);
                let shrunk = outcome.shrunk.get(&i);
                let reason = match shrunk {
                    _ if tokens == 0 => Reason::ZeroToken,
                    Some(s) if s.variant > 0 => Reason::Variant,
                    Some(Shrunk { cut: Some(_), .. }) => Reason::Truncated,
                    _ => Reason::Scored,
                };
                Decision {
                    item: i,
                    score: score_of.get(&i).copied().unwrap_or(0.0),
                    reason,
                    item_tokens: tokens,
                    available_tokens: 0,
                    related: None,
                    group: 0,
                    group_tokens: tokens,
                    variant: shrunk.map_or(0, |s| s.variant),
                    added_tokens: outcome.tokens_of(items, i),
                    cut: shrunk.and_then(|s| s.cut),
                    content_len: 0,
                    stage: Stage::Place,
                }
            })
            .collect();
        let mut included: Vec<Decision> = included;
        let mut excluded = self.excluded;
        if let Some(g) = groups {
            for d in included.iter_mut().chain(&mut excluded) {
                if let Some(group) = g.group(d.item) {
                    d.group = g.id(group);
                    d.group_tokens = g.tokens(group);
                }
            }
        }
        // By score descending, stable: ties keep the order of exclusion.
        let order = crate::sort::by_value_desc(excluded.iter().map(|d| d.score));
        excluded = order.iter().map(|&p| excluded[p as usize]).collect();
        Report {
            included,
            excluded,
            events: self.events,
            tokens_over_budget: self.over,
            outcome,
            session: None,
            max_tokens: 0,
            quotas: Vec::new(),
        }
    }
}

impl Report {
    /// The SelectionReport's JSON wire format (`diagnostics/selection-report.md`):
    /// events, included (placed order), excluded (score order), totals.
    /// Items are written with the fields they have (no content when none
    /// was set); an item named by a reason (`deduplicated_against`,
    /// `displaced_by`) is named by its content, or `#<index>` without one.
    pub fn json(&self, items: &Items) -> String {
        self.json_value(items).to_string()
    }

    /// [`Report::json`] as a JSON value.
    pub fn json_value(&self, items: &Items) -> serde_json::Value {
        use serde_json::{json, Map, Value};
        let name = |i: u32| -> Value {
            match items.content(i) {
                Some(c) => c.into(),
                None => format!("#{i}").into(),
            }
        };
        let item = |i: u32| -> Value {
            let mut m = Map::new();
            if let Some(c) = items.content(i) {
                m.insert("content".into(), c.into());
            }
            let view = items.view();
            m.insert("tokens".into(), view.tokens(i).into());
            m.insert("kind".into(), view.kind_table().name(view.kind(i)).into());
            m.insert("source".into(), items.source(i).into());
            if let Some(p) = items.priority(i) {
                m.insert("priority".into(), p.into());
            }
            let tags = items.tags(i);
            if !tags.is_empty() {
                m.insert(
                    "tags".into(),
                    tags.iter().map(|t| Value::from(&**t)).collect(),
                );
            }
            let meta = items.metadata(i);
            if !meta.is_empty() {
                let o: Map<String, Value> = meta
                    .iter()
                    .map(|(k, v)| (k.to_string(), Value::from(&**v)))
                    .collect();
                m.insert("metadata".into(), o.into());
            }
            if let Some(t) = items.timestamp(i) {
                m.insert("timestamp".into(), rfc3339(t).into());
            }
            if let Some(h) = items.relevance_hint(i) {
                // JSON has no NaN or infinity: a non-finite hint is null.
                m.insert("futureRelevanceHint".into(), json!(h));
            }
            if items.pinned(i) {
                m.insert("pinned".into(), true.into());
            }
            m.into()
        };
        let grouped = self
            .included
            .iter()
            .chain(&self.excluded)
            .any(|d| d.group != 0);
        let groups = grouped.then(|| Groups::of(items)).flatten();
        let reason = |d: &Decision| -> Value {
            let mut m = Map::new();
            m.insert("reason".into(), d.reason.name().into());
            match d.reason {
                Reason::BudgetExceeded => {
                    m.insert("item_tokens".into(), d.item_tokens.into());
                    m.insert("available_tokens".into(), d.available_tokens.into());
                }
                Reason::Deduplicated => {
                    let kept = d.related.map_or(Value::Null, name);
                    m.insert("deduplicated_against".into(), kept);
                }
                Reason::NegativeTokens => {
                    m.insert("tokens".into(), d.item_tokens.into());
                }
                Reason::PinnedOverride => {
                    let by = d.related.map_or(Value::Null, name);
                    m.insert("displaced_by".into(), by);
                }
                Reason::CountCapExceeded => {
                    // The kind the cap counted: a group's is its first member's.
                    let view = items.view();
                    let first = groups.as_ref().map_or(d.item, |g| g.unit(&d.item)[0]);
                    let kind = view.kind_table().name(view.kind(first));
                    m.insert("kind".into(), kind.into());
                    m.insert("item_tokens".into(), d.item_tokens.into());
                }
                _ => {}
            }
            m.into()
        };
        // A grouped item names its group; its reason, the group's tokens.
        let entry = |d: &Decision| {
            let (mut item, mut reason) = (item(d.item), reason(d));
            if d.group != 0 {
                item["group"] = d.group.into();
                reason["group_tokens"] = d.group_tokens.into();
            }
            // An item included as a variant or cut: which, and what it adds.
            if d.variant > 0 || d.cut.is_some() {
                reason["variant"] = d.variant.into();
                reason["tokens_added"] = d.added_tokens.into();
            }
            if let Some((head_end, tail_start)) = d.cut {
                reason["cut"] = json!({ "head_end": head_end, "tail_start": tail_start });
            }
            json!({ "item": item, "score": d.score, "reason": reason })
        };
        let events: Vec<Value> = self
            .events
            .iter()
            .map(|e| json!({ "stage": e.stage, "duration_ms": e.duration_ms, "item_count": e.item_count }))
            .collect();
        let report = json!({
            "events": events,
            "included": self.included.iter().map(entry).collect::<Vec<_>>(),
            "excluded": self.excluded.iter().map(entry).collect::<Vec<_>>(),
            "total_candidates": self.total_candidates(),
            "total_tokens_considered": self.total_tokens_considered(),
        });
        let mut report = report;
        if let Some(info) = &self.session {
            let breakpoints: Vec<Value> = info
                .breakpoints
                .iter()
                .map(|b| json!({ "items": b.items, "tokens": b.tokens, "at": b.mark.name() }))
                .collect();
            report["session"] = json!({
                "action": info.action.map_or("first", |a| a.name()),
                "stablePrefixItems": info.stable_items,
                "stablePrefixTokens": info.stable_tokens,
                "breakpoints": breakpoints,
            });
        }
        report["analytics"] = crate::analytics::json(self, items);
        report
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// UTC milliseconds since the epoch as RFC 3339 (`2024-06-01T00:00:00Z`,
/// with `.mmm` when there are milliseconds).
pub fn rfc3339(unix_millis: i64) -> String {
    let secs = unix_millis.div_euclid(1000);
    let ms = unix_millis.rem_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, mo, d) = civil_from_days(days);
    let (h, mi, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else {
        format!("{y:+}")
    };
    if ms == 0 {
        format!("{year}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
    } else {
        format!("{year}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_of_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_717_200_000_000), "2024-06-01T00:00:00Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
        // The int64 extremes format without overflow.
        assert!(rfc3339(i64::MAX).starts_with('+'));
        assert!(rfc3339(i64::MIN).starts_with('-'));
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn stage_durations_are_in_milliseconds() {
        use std::time::Duration;
        assert_eq!(millis(Duration::from_millis(1500)), 1500.0);
        assert_eq!(millis(Duration::from_micros(250)), 0.25);
        assert_eq!(millis(Duration::ZERO), 0.0);
    }

    #[test]
    fn civil_from_days_agrees_with_chrono_over_five_thousand_years() {
        // Every day from about 770 BCE to 4710 CE: each era boundary,
        // century and leap rule of the proleptic Gregorian calendar.
        let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
        for z in -1_000_000i64..1_000_000 {
            let want = epoch + chrono::TimeDelta::days(z);
            let got = civil_from_days(z);
            let want = (
                i64::from(chrono::Datelike::year(&want)),
                chrono::Datelike::month(&want),
                chrono::Datelike::day(&want),
            );
            assert_eq!(got, want, "day {z}");
        }
    }

    #[test]
    fn rfc3339_agrees_with_chrono() {
        use chrono::{DateTime, SecondsFormat};
        // Seeded instants from year 1 to 9999, half with milliseconds.
        let mut rng = crate::testing::Rng(11);
        let (lo, hi) = (-62_135_596_800_000i64, 253_402_300_799_999i64);
        for k in 0..20_000 {
            let mut t = lo + (rng.next() % (hi - lo) as u64) as i64;
            if k % 2 == 0 {
                t -= t.rem_euclid(1000);
            }
            let ms = t.rem_euclid(1000) != 0;
            let format = if ms {
                SecondsFormat::Millis
            } else {
                SecondsFormat::Secs
            };
            let want = DateTime::from_timestamp_millis(t)
                .unwrap()
                .to_rfc3339_opts(format, true);
            assert_eq!(rfc3339(t), want, "{t}");
        }
    }

    #[test]
    fn json_carries_each_reasons_fields_and_only_given_attributes() {
        use crate::pipeline::{Engine, Pipeline};
        use crate::slicer::Slicer;
        use serde_json::Value;
        // 0 pinned (100 of the 150 target), 1 negative, 2 fits the target
        // but not the 50 the pinned item left, 3 fits.
        let mut items = Items::from_spec(&[
            (100, 0.5, "Message"),
            (-3, 0.5, "Message"),
            (90, 0.9, "Message"),
            (10, 0.1, "Message"),
        ]);
        items.set_pinned(0, true).unwrap();
        items.set_content(0, "system").unwrap();
        items.add_tag(3, "auth").unwrap();
        items.set_metadata(3, "k", "v").unwrap();
        let budget = crate::Budget::new(1000, 150).unwrap();
        let p = Pipeline::new(None, Engine::new(Slicer::Greedy), None);
        let mut report = Report::default();
        p.run(&items, &budget, Some(&mut report)).unwrap();
        let doc: Value = serde_json::from_str(&report.json(&items)).unwrap();
        let find = |list: &str, tokens: i64| -> Value {
            let all = doc[list].as_array().unwrap();
            let hit = all.iter().find(|e| e["item"]["tokens"] == tokens);
            hit.unwrap_or_else(|| panic!("no {tokens}-token item in {list}: {doc}"))
                .clone()
        };
        let negative = find("excluded", -3);
        assert_eq!(negative["reason"]["reason"], "NegativeTokens");
        assert_eq!(negative["reason"]["tokens"], -3);
        let displaced = find("excluded", 90);
        assert_eq!(displaced["reason"]["reason"], "PinnedOverride");
        assert_eq!(displaced["reason"]["displaced_by"], "system");
        // Tags and metadata where given, absent where not.
        let tagged = find("included", 10);
        assert_eq!(tagged["item"]["tags"], serde_json::json!(["auth"]));
        assert_eq!(tagged["item"]["metadata"], serde_json::json!({"k": "v"}));
        let pinned = find("included", 100);
        assert_eq!(pinned["item"]["pinned"], true);
        for key in ["tags", "metadata"] {
            assert!(pinned["item"].get(key).is_none(), "{key} in {pinned}");
        }
    }

    #[test]
    fn zero_pinned_tokens_displace_nothing() {
        use crate::pipeline::{Engine, Pipeline};
        use crate::slicer::Slicer;
        // A pinned item of 0 tokens; the 20% safety margin leaves 120 of
        // the 150 target, so the 130-token item fits the room (150) but not
        // the effective target: the margin excluded it, not the pinned item.
        let mut items = Items::from_spec(&[(0, 0.5, "Message"), (130, 0.9, "Message")]);
        items.set_pinned(0, true).unwrap();
        let mut budget = crate::Budget::new(1000, 150).unwrap();
        budget.set_safety_margin(20.0).unwrap();
        let p = Pipeline::new(None, Engine::new(Slicer::Greedy), None);
        let mut report = Report::default();
        p.run(&items, &budget, Some(&mut report)).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&report.json(&items)).unwrap();
        let excluded = doc["excluded"].as_array().unwrap();
        assert_eq!(excluded.len(), 1, "{doc}");
        assert_eq!(excluded[0]["item"]["tokens"], 130);
        assert_eq!(excluded[0]["reason"]["reason"], "BudgetExceeded", "{doc}");
    }

    #[test]
    fn every_reason_has_its_own_number_and_name() {
        let mut seen = std::collections::HashSet::new();
        for r in &Reason::ALL {
            assert!(seen.insert((*r as i32, r.name())), "{r:?}");
        }
    }
}
