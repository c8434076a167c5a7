//! Tracing (`spec/cupel/integrations/opentelemetry.md`): a pipeline with a
//! [`Hook`] calls it during each successful run with what the chapter puts
//! on its spans: one event per stage (item counts in and out, exclusions),
//! one per excluded item (reason, kind, tokens) from level
//! [`Level::Exclusions`], one per included item (kind, tokens, score) at
//! [`Level::Full`], and last the pipeline's own (max tokens, level), each
//! with its start and duration so that a binding can build real spans.
//! Never content or metadata.
//!
//! With no hook the pipeline runs exactly as before: the events are made
//! from the run's SelectionReport, which a traced run records even when the
//! host asked for none.

use std::sync::Arc;

use crate::items::Items;
use crate::pipeline::report::{Reason, Report, Stage};

/// How much a trace carries (the chapter's verbosity tiers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `StageOnly`: the pipeline and its five stages.
    Stages = 0,
    /// `StageAndExclusions`: + one event per excluded item.
    Exclusions = 1,
    /// `Full`: + one event per included item.
    Full = 2,
}

impl Level {
    /// The chapter's tier name (`cupel.verbosity`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Stages => "StageOnly",
            Level::Exclusions => "StageAndExclusions",
            Level::Full => "Full",
        }
    }
}

/// What an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `cupel.pipeline`, the root span (sent last).
    Pipeline = 0,
    /// `cupel.stage.<name>`, a child span of the pipeline.
    Stage = 1,
    /// A `cupel.exclusion` event on its stage's span.
    Exclusion = 2,
    /// A `cupel.item.included` event (on the Place stage's span).
    Included = 3,
}

/// One trace event. Borrowed strings live for the call only.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    pub kind: Kind,
    pub level: Level,
    /// The stage (Stage, Exclusion, Included events).
    pub stage: Option<Stage>,
    /// Stage: items entering and leaving it; Pipeline: items in and
    /// included.
    pub item_count_in: usize,
    pub item_count_out: usize,
    /// Stage: the items it excluded.
    pub exclusion_count: usize,
    /// Exclusion / Included: the item's push index.
    pub item: u32,
    /// Exclusion: why.
    pub reason: Option<Reason>,
    /// Exclusion / Included: the item's kind as pushed.
    pub item_kind: &'a str,
    /// Exclusion / Included: the item's tokens (Included: the tokens it adds).
    pub tokens: i64,
    /// Included: its final score.
    pub score: f64,
    /// Pipeline: the budget's max_tokens.
    pub max_tokens: i64,
    /// Start, in nanoseconds since the Unix epoch (0 where the platform has
    /// no clock: WebAssembly), and duration in nanoseconds (0 for item
    /// events).
    pub start_unix_nanos: u64,
    pub duration_nanos: u64,
}

/// The callback of a traced pipeline and its level.
#[derive(Clone)]
pub struct Hook {
    pub level: Level,
    pub callback: Arc<dyn Fn(&Event<'_>) + Send + Sync>,
}

impl std::fmt::Debug for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hook").field("level", &self.level).finish()
    }
}

/// Nanoseconds since the Unix epoch now (0 without a clock).
pub fn now_unix_nanos() -> u64 {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
    #[cfg(target_arch = "wasm32")]
    {
        0
    }
}

/// The events of one run, in the order a span builder wants them: each
/// stage followed by its exclusions (the Place stage then by the included
/// items), the pipeline last.
pub fn emit(hook: &Hook, items: &Items, report: &Report, max_tokens: i64, start: u64) {
    let level = hook.level;
    let send = |e: Event<'_>| (hook.callback)(&e);
    let blank = Event {
        kind: Kind::Stage,
        level,
        stage: None,
        item_count_in: 0,
        item_count_out: 0,
        exclusion_count: 0,
        item: 0,
        reason: None,
        item_kind: "",
        tokens: 0,
        score: 0.0,
        max_tokens: 0,
        start_unix_nanos: 0,
        duration_nanos: 0,
    };
    let total = report.total_candidates();
    let counts = stage_counts(report);
    let mut at = start;
    for (k, stage) in Stage::ALL.into_iter().enumerate() {
        let nanos = report
            .events
            .iter()
            .find(|e| e.stage == stage.name())
            .map_or(0, |e| (e.duration_ms * 1e6) as u64);
        let excluded = report.excluded.iter().filter(|d| d.stage == stage);
        send(Event {
            stage: Some(stage),
            item_count_in: counts[k].0,
            item_count_out: counts[k].1,
            exclusion_count: excluded.clone().count(),
            start_unix_nanos: at,
            duration_nanos: nanos,
            ..blank
        });
        if level >= Level::Exclusions {
            for d in excluded {
                send(Event {
                    kind: Kind::Exclusion,
                    stage: Some(stage),
                    item: d.item,
                    reason: Some(d.reason),
                    item_kind: items.kind_name(d.item),
                    tokens: d.item_tokens,
                    start_unix_nanos: at + nanos,
                    ..blank
                });
            }
        }
        if level >= Level::Full && stage == Stage::Place {
            for d in &report.included {
                send(Event {
                    kind: Kind::Included,
                    stage: Some(stage),
                    item: d.item,
                    item_kind: items.kind_name(d.item),
                    tokens: d.added_tokens,
                    score: d.score,
                    start_unix_nanos: at + nanos,
                    ..blank
                });
            }
        }
        at += nanos;
    }
    send(Event {
        kind: Kind::Pipeline,
        item_count_in: total,
        item_count_out: report.included.len(),
        exclusion_count: report.excluded.len(),
        max_tokens,
        start_unix_nanos: start,
        duration_nanos: at - start,
        ..blank
    });
}

/// Items in and out of each stage of [`Stage::ALL`]: Classify takes every
/// item and passes on those it did not exclude (pinned ones included);
/// Score and Deduplicate the scoreable ones; Slice the candidates left;
/// Place the selected and pinned items, giving the included ones.
fn stage_counts(report: &Report) -> [(usize, usize); 5] {
    let excluded_in = |s: Stage| report.excluded.iter().filter(|d| d.stage == s).count();
    let event = |s: Stage| {
        report
            .events
            .iter()
            .find(|e| e.stage == s.name())
            .map_or(0, |e| e.item_count)
    };
    let total = report.total_candidates();
    let classified = total - excluded_in(Stage::Classify);
    let scored = event(Stage::Score);
    let unique = event(Stage::Deduplicate);
    let to_slice = event(Stage::Slice);
    let sliced = to_slice - excluded_in(Stage::Slice).min(to_slice);
    let pinned = classified.saturating_sub(scored);
    let out = report.included.len();
    [
        (total, classified),
        (scored, scored),
        (scored, unique),
        (to_slice, sliced),
        (sliced + pinned, out),
    ]
}
