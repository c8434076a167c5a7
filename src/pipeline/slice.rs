//! Stage 5, Slice (`spec/cupel/pipeline/slice.md`): the effective budget,
//! then the slicer over the Sort stage's order. [`Engine::slice`] is one
//! `cupel_slice` call (Sort and Slice on the pushed scores, negative-token
//! items left out as Classify would); [`Engine::slice_sorted`] is the
//! pipeline's Slice stage. Also budget simulation (supplement 8), which runs
//! the same path repeatedly.

use crate::budget::{Budget, SliceBudget};
use crate::error::{invalid, Error, Result};
use crate::group::{Groups, Units};
use crate::items::{Items, View};
use crate::slicer::knapsack::scaled_value;
use crate::slicer::{greedy_all, Ctx, Shortfall, Slicer, DEFAULT_MEMORY_LIMIT};
use crate::sort::sort_stage;

/// A slicer together with the memory limit of its calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Engine {
    pub slicer: Slicer,
    pub memory_limit: usize,
}

impl Engine {
    pub fn new(slicer: Slicer) -> Self {
        Engine {
            slicer,
            memory_limit: DEFAULT_MEMORY_LIMIT,
        }
    }
}

/// The result of one slice call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// Item indices in the slicer's output order.
    pub selected: Vec<u32>,
    pub effective_max: i64,
    pub effective_target: i64,
    /// Sum of the selected items' tokens (saturating).
    pub selected_tokens: i64,
    pub shortfalls: Vec<Shortfall>,
    pub cap_excluded: Vec<u32>,
}

impl Engine {
    /// Runs the slicer on `sorted` (Sort-stage order, no negative-token
    /// item) with an effective budget: the pipeline's Slice stage. With
    /// `groups`, the slicer runs on the units of `sorted` (`crate::group`)
    /// and its selection is expanded to their members.
    pub fn slice_sorted(
        &self,
        items: View<'_>,
        sorted: &[u32],
        effective: SliceBudget,
        groups: Option<&Groups>,
    ) -> Result<Outcome> {
        let Some(groups) = groups else {
            let mut ctx = Ctx::new(items, self.memory_limit);
            let selected = self.slicer.slice(sorted, effective, &mut ctx)?;
            return Ok(Self::outcome(items, selected, effective, ctx));
        };
        // A top-level GreedySlice needs the units' Sort order only for
        // ties: it gets them in item order with their Sort keys.
        let greedy = matches!(self.slicer, Slicer::Greedy);
        let units = Units::build(items, groups, sorted, scaled_value, !greedy)?;
        let mut ctx = Ctx::new(units.view(items), self.memory_limit);
        let chosen = match greedy {
            true => greedy_all(&ctx.items, effective.target),
            false => {
                let cands: Vec<u32> = (0..units.len() as u32).collect();
                self.slicer.slice(&cands, effective, &mut ctx)?
            }
        };
        let selected = units.expand(&chosen);
        let cap_excluded = units.expand(&ctx.cap_excluded);
        let shortfalls = std::mem::take(&mut ctx.shortfalls);
        Ok(Outcome {
            selected_tokens: items.sum_tokens(&selected),
            selected,
            effective_max: effective.max,
            effective_target: effective.target,
            shortfalls,
            cap_excluded,
        })
    }

    fn outcome(
        items: View<'_>,
        selected: Vec<u32>,
        effective: SliceBudget,
        ctx: Ctx<'_>,
    ) -> Outcome {
        Outcome {
            selected_tokens: items.sum_tokens(&selected),
            selected,
            effective_max: effective.max,
            effective_target: effective.target,
            shortfalls: ctx.shortfalls,
            cap_excluded: ctx.cap_excluded,
        }
    }

    /// The Sort stage over the items a slicer may see (no negative token
    /// count: supplement 1). A top-level GreedySlice on a list without
    /// negative items orders candidates by density and breaks ties as the
    /// Sort stage would (see [`crate::slicer::greedy`]), so it gets them in
    /// push order and the sort is skipped.
    /// A grouped list gets its candidates in item order: its units are put
    /// in Sort order by `Units::build`, which sorts units, not items.
    fn sort_stage(&self, items: View<'_>, grouped: bool) -> Vec<u32> {
        let negative = items.tokens_slice().iter().any(|&t| t < 0);
        match self.slicer {
            _ if grouped => (0..items.len() as u32)
                .filter(|&i| items.tokens(i) >= 0)
                .collect(),
            Slicer::Greedy if !negative => (0..items.len() as u32).collect(),
            _ if negative => sort_stage(&items)
                .into_iter()
                .filter(|&i| items.tokens(i) >= 0)
                .collect(),
            _ => sort_stage(&items),
        }
    }

    /// Sort stage, then Slice stage with `budget` and `pinned_tokens`, on
    /// the pushed scores (`cupel_slice`).
    pub fn slice(&self, items: &Items, budget: &Budget, pinned_tokens: i64) -> Result<Outcome> {
        let groups = Groups::of(items);
        let items = items.view();
        let effective = budget.effective(pinned_tokens)?;
        if groups.is_none()
            && matches!(self.slicer, Slicer::Greedy)
            && !items.tokens_slice().iter().any(|&t| t < 0)
        {
            // Density order with Sort-stage ties needs no Sort stage (see
            // `Engine::sort_stage`) nor a candidate list.
            let selected = greedy_all(&items, effective.target);
            let ctx = Ctx::new(items, self.memory_limit);
            return Ok(Self::outcome(items, selected, effective, ctx));
        }
        let sorted = self.sort_stage(items, groups.is_some());
        self.slice_sorted(items, &sorted, effective, groups.as_ref())
    }

    /// `Unsupported` when the slicer, or one nested in it, satisfies `pred`.
    fn refuse_if(&self, what: &str, pred: &dyn Fn(&Slicer) -> bool) -> Result<()> {
        let outer = self.slicer.name();
        match self.slicer.find(pred).map(Slicer::name) {
            None => Ok(()),
            Some(name) if name == outer => Err(Error::Unsupported(format!(
                "{what} is not defined for a {name}: its selection is not monotonic in the budget"
            ))),
            Some(name) => Err(Error::Unsupported(format!(
                "{what} is not defined for a {outer} that contains a {name}: \
                 its selection is not monotonic in the budget"
            ))),
        }
    }

    /// GetMarginalItems: items selected at `budget` but not at the budget
    /// reduced by `slack`, in the order of the full selection.
    pub fn marginal_items(
        &self,
        items: &Items,
        budget: &Budget,
        pinned_tokens: i64,
        slack: i64,
    ) -> Result<Vec<u32>> {
        self.refuse_if("GetMarginalItems", &|s| matches!(s, Slicer::Quota(_)))?;
        let reduced = budget.reduced_by(slack)?;
        let full_budget = budget.effective(pinned_tokens)?;
        let reduced_budget = reduced.effective(pinned_tokens)?;
        if slack == 0 {
            return Ok(Vec::new());
        }
        let groups = Groups::of(items);
        let (items, groups) = (items.view(), groups.as_ref());
        let sorted = self.sort_stage(items, groups.is_some());
        let full = self
            .slice_sorted(items, &sorted, full_budget, groups)?
            .selected;
        let less = self
            .slice_sorted(items, &sorted, reduced_budget, groups)?
            .selected;
        let mut in_less = vec![false; items.len()];
        for i in less {
            in_less[i as usize] = true;
        }
        Ok(full.into_iter().filter(|&i| !in_less[i as usize]).collect())
    }

    /// FindMinBudgetFor: the smallest probe budget b (max = target = b) at
    /// which `target_index` is selected, or `None` if not reachable by
    /// `ceiling`.
    pub fn find_min_budget(
        &self,
        items: &Items,
        pinned_tokens: i64,
        target_index: usize,
        ceiling: i64,
    ) -> Result<Option<i64>> {
        self.refuse_if("FindMinBudgetFor", &|s| {
            matches!(
                s,
                Slicer::Quota(_) | Slicer::CountQuota(_) | Slicer::CountKnapsack(_)
            )
        })?;
        if pinned_tokens < 0 {
            return invalid!("pinned_tokens is {pinned_tokens}; it must be >= 0");
        }
        if target_index >= items.len() {
            return invalid!(
                "target_index {target_index} is out of range: there are {} items",
                items.len()
            );
        }
        let target = target_index as u32;
        let tokens = items.view().tokens(target);
        if tokens < 0 {
            // A negative-token item is never selected (supplement 1).
            return Ok(None);
        }
        if ceiling < tokens {
            return invalid!("search_ceiling {ceiling} < tokens {tokens} of item {target_index}");
        }
        let groups = Groups::of(items);
        let (items, groups) = (items.view(), groups.as_ref());
        let sorted = self.sort_stage(items, groups.is_some());
        let selected_at = |b: i64| -> Result<bool> {
            let effective = Budget::new(b, b)?.effective(pinned_tokens)?;
            Ok(self
                .slice_sorted(items, &sorted, effective, groups)?
                .selected
                .contains(&target))
        };
        let (mut low, mut high) = (tokens, ceiling);
        while high - low > 1 {
            let mid = low + (high - low) / 2;
            if selected_at(mid)? {
                high = mid;
            } else {
                low = mid;
            }
        }
        if selected_at(low)? {
            Ok(Some(low))
        } else if selected_at(high)? {
            Ok(Some(high))
        } else {
            Ok(None)
        }
    }
}
