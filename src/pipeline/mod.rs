//! The Cupel pipeline (`spec/cupel/pipeline.md`): six stages over one item
//! store, each a function from the previous stage's output (item indices)
//! to its own, in a module beside its spec chapter:
//!
//! | stage | module | spec |
//! |---|---|---|
//! | 1 Classify | [`classify`] | `pipeline/classify.md` |
//! | 2 Score | [`crate::scorer`] (via [`Pipeline::run`]) | `pipeline/score.md`, `scorers/` |
//! | 3 Deduplicate | [`deduplicate`] | `pipeline/deduplicate.md` |
//! | 4 Sort | [`crate::sort`] | `pipeline/sort.md` |
//! | 5 Slice | [`slice`] | `pipeline/slice.md`, `slicers/` |
//! | 6 Place | [`place`] and [`crate::placer`] | `pipeline/place.md`, `placers/` |
//!
//! [`report`] collects every decision for the SelectionReport.

pub mod classify;
pub mod deduplicate;
pub mod place;
pub mod report;
pub mod slice;

pub use place::Overflow;
pub use report::{Decision, Reason, Report};
pub use slice::{Engine, Outcome};

use crate::budget::Budget;
use crate::error::Result;
use crate::group::Groups;
use crate::items::Items;
use crate::placer::Placer;
use crate::scorer::Scorer;
use crate::sort::by_value_desc;

/// What a session restricts a run to (`crate::session`): the sorted items
/// the slicer may not take (`skip`, by item index), and a cap on the
/// effective target.
pub(crate) struct Restrict<'a> {
    pub skip: &'a [bool],
    pub cap: i64,
}

/// One run's results beyond the placed order (`Pipeline::run_full`).
pub(crate) struct Run {
    pub placed: Vec<u32>,
    /// The Slice stage's outcome (with the options chosen).
    pub outcome: Outcome,
    pub prepared: Prepared,
}

/// What stages 1-4 give stages 5 and 6.
pub(crate) struct Prepared {
    pub groups: Option<Groups>,
    pub classes: classify::Classes,
    /// The Score stage's scores, by item index (0 for unscored items).
    pub scores: Vec<f64>,
    /// The Sort stage's order (after Deduplicate).
    pub sorted: Vec<u32>,
}

/// A configured pipeline: scorer (`None`: the pushed scores), slicer,
/// placer (`None`: the slicer's output order), deduplication and overflow.
#[derive(Debug, Clone)]
pub struct Pipeline {
    pub scorer: Option<Scorer>,
    pub engine: Engine,
    pub placer: Option<Placer>,
    pub deduplication: bool,
    pub overflow: Overflow,
    /// Cuts truncatable items (`crate::choice::fill`).
    pub tokenizer: Option<crate::text::tokenizer::Tokenizer>,
    /// What a policy file carries beyond the stages (`crate::policy`).
    pub policy: crate::policy::Extras,
    /// Called during each run when set (`crate::trace`).
    pub trace: Option<crate::trace::Hook>,
}

impl Pipeline {
    pub fn new(scorer: Option<Scorer>, engine: Engine, placer: Option<Placer>) -> Self {
        Pipeline {
            scorer,
            engine,
            placer,
            deduplication: true,
            overflow: Overflow::Throw,
            tokenizer: None,
            policy: Default::default(),
            trace: None,
        }
    }

    /// All six stages: the placed item indices, and every decision in
    /// `report` (filled only when the run succeeds).
    pub fn run(
        &self,
        items: &Items,
        budget: &Budget,
        report: Option<&mut Report>,
    ) -> Result<Vec<u32>> {
        self.run_full(items, budget, report).map(|r| r.placed)
    }

    /// [`Pipeline::run`] with what a session needs of it: the Slice
    /// stage's outcome (the options chosen) and stages 1-4's results, which
    /// [`Pipeline::run_restricted`] reuses.
    pub(crate) fn run_full(
        &self,
        items: &Items,
        budget: &Budget,
        report: Option<&mut Report>,
    ) -> Result<Run> {
        // A traced run records a report even when the host asked for none:
        // the trace is made from it (`crate::trace`).
        let start = self.trace.as_ref().map(|_| crate::trace::now_unix_nanos());
        let mut own = None;
        let report = match (report, start) {
            (Some(r), _) => Some(r),
            (None, Some(_)) => Some(own.insert(Report::default())),
            (None, None) => None,
        };
        let mut log = report::Log::new(report.is_some());
        let prepared = self.prepare(items, budget, &mut log)?;
        let (placed, outcome) = self.slice_and_place(items, budget, &prepared, None, &mut log)?;
        let outcome = match report {
            Some(report) => {
                let kept = outcome.clone();
                let (pinned, groups) = (&prepared.classes.pinned, prepared.groups.as_ref());
                *report = log.finish(items, &placed, pinned, outcome, groups);
                report.max_tokens = budget.max_tokens();
                report.quotas = crate::analytics::quota_rows(&self.engine.slicer, items, report);
                if let (Some(hook), Some(start)) = (&self.trace, start) {
                    crate::trace::emit(hook, items, report, budget.max_tokens(), start);
                }
                kept
            }
            None => outcome,
        };
        Ok(Run {
            placed,
            outcome,
            prepared,
        })
    }

    /// Stages 5 and 6 again on `run`'s stages 1-4, the slicer seeing only
    /// the sorted items `restrict.skip` leaves, with at most `restrict.cap`
    /// tokens: the placed items and the Slice stage's outcome.
    pub(crate) fn run_restricted(
        &self,
        items: &Items,
        budget: &Budget,
        run: &Run,
        restrict: &Restrict<'_>,
    ) -> Result<(Vec<u32>, Outcome)> {
        let mut log = report::Log::new(false);
        self.slice_and_place(items, budget, &run.prepared, Some(restrict), &mut log)
    }

    /// Stages 1-4: Classify, Score, Deduplicate, Sort.
    fn prepare(&self, items: &Items, budget: &Budget, log: &mut report::Log) -> Result<Prepared> {
        crate::planted_slowdown(items.len());
        crate::choice::fill::check(items, self.tokenizer.as_ref())?;
        // Keep-together groups (none: nothing is built).
        let groups = Groups::of(items);
        // 1. Classify: negative-token items out, pinned ones aside (a group
        // goes as one).
        let classes = classify::classify(items, budget, groups.as_ref(), log)?;
        // 2. Score the scoreable items (scores by item index).
        let scores = match &self.scorer {
            Some(scorer) => scorer.score_all(items, &classes.scoreable),
            None => items.view().scores().to_vec(),
        };
        log.stage("Score", classes.scoreable.len());
        // 3. Deduplicate (byte-exact content, highest score wins; grouped
        // items take no part).
        let unique = match self.deduplication {
            true => deduplicate::deduplicate(items, &classes.scoreable, &scores, log),
            false => classes.scoreable.clone(),
        };
        log.stage("Deduplicate", unique.len());
        // 4. Sort: score descending, ties in their order after deduplication.
        let sorted: Vec<u32> = by_value_desc(unique.iter().map(|&i| scores[i as usize]))
            .into_iter()
            .map(|p| unique[p as usize])
            .collect();
        Ok(Prepared {
            groups,
            classes,
            scores,
            sorted,
        })
    }

    /// Stages 5 and 6: Slice (and the fill step), Place.
    fn slice_and_place(
        &self,
        items: &Items,
        budget: &Budget,
        prepared: &Prepared,
        restrict: Option<&Restrict<'_>>,
        log: &mut report::Log,
    ) -> Result<(Vec<u32>, Outcome)> {
        let Prepared {
            groups,
            classes,
            scores,
            sorted,
        } = prepared;
        let groups = groups.as_ref();
        let restricted: Vec<u32>;
        let sorted = match restrict {
            Some(r) => {
                restricted = sorted
                    .iter()
                    .copied()
                    .filter(|&i| !r.skip[i as usize])
                    .collect();
                &restricted
            }
            None => sorted,
        };
        // 5. Slice with the budget left after the pinned items.
        let view = items.view_scored(scores);
        let mut effective = budget.effective(classes.pinned_tokens)?;
        if let Some(r) = restrict {
            effective.target = effective.target.min(r.cap.max(0));
            effective.max = effective.max.min(r.cap.max(0)).max(effective.target);
        }
        let variants = items.has_variants().then_some(items);
        let mut outcome = self
            .engine
            .slice_sorted(view, sorted, effective, groups, variants)?;
        // Truncatable items fill what the slicer left.
        let tokenizer = self.tokenizer.as_ref();
        crate::choice::fill::fill(items, view, tokenizer, sorted, &mut outcome);
        let pinned = (classes.pinned.first()).map(|&p| {
            (
                p,
                classes.pinned_tokens,
                budget.target_tokens() - budget.output_reserve(),
            )
        });
        log.slice(view, sorted, &outcome, pinned, groups);
        // 6. Place: merge, overflow, order.
        let placed = place::place(
            items,
            &classes.pinned,
            &outcome,
            scores,
            budget.target_tokens(),
            self.overflow,
            self.placer.as_ref(),
            groups,
            log,
        )?;
        Ok((placed, outcome))
    }
}
