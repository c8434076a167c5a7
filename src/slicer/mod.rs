//! The slicers. Each works on a list of item indices (`cands`) given in
//! Sort-stage order; "original index" in the spec documents is the position
//! in that list. Slicers return item indices and never copy item data.

mod count_quota;
pub(crate) mod greedy;
pub mod kernel;
pub mod knapsack;
mod quota;

pub use count_quota::{CountEntry, CountQuota, Scarcity};
pub use greedy::{greedy, greedy_all};
pub use knapsack::{knapsack, Knapsack, DEFAULT_BUCKET_SIZE};
pub use quota::{Quota, QuotaEntry};

use crate::budget::SliceBudget;
use crate::error::Result;
use crate::items::View;

/// Default bound on the working memory of one slice call: 1 GiB.
pub const DEFAULT_MEMORY_LIMIT: usize = 1 << 30;

/// A configured slicer. Decorators own a copy of their inner slicer.
#[derive(Debug, Clone, PartialEq)]
pub enum Slicer {
    Greedy,
    Knapsack(Knapsack),
    Quota(Quota),
    CountQuota(CountQuota),
    /// CountConstrainedKnapsackSlice: CountQuota phases around a fixed knapsack.
    CountKnapsack(CountQuota),
    /// StreamSlice (supplement 7) inside a pipeline: the candidates arrive
    /// in the Sort stage's order and are decided a batch of this many at a
    /// time (`crate::stream`). Made by a policy with `"slicerType":
    /// "stream"`; `cupel_stream_new` is the API for items as they arrive.
    Stream(usize),
}

/// A count requirement that could not be met (scarcity `Degrade`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortfall {
    /// The kind as spelled in the count entry that configured it.
    pub kind: String,
    pub required: u32,
    pub satisfied: u32,
}

/// State of one slice call: the items, the memory limit, and what the
/// count-based slicers record at any nesting depth.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub items: View<'a>,
    pub memory_limit: usize,
    pub shortfalls: Vec<Shortfall>,
    /// Item indices excluded by a count cap, in the order they were excluded.
    pub cap_excluded: Vec<u32>,
}

impl<'a> Ctx<'a> {
    pub fn new(items: View<'a>, memory_limit: usize) -> Self {
        Ctx {
            items,
            memory_limit,
            shortfalls: Vec::new(),
            cap_excluded: Vec::new(),
        }
    }
}

impl Slicer {
    /// Runs the slicer on `cands` (item indices in Sort-stage order).
    pub fn slice(&self, cands: &[u32], budget: SliceBudget, ctx: &mut Ctx<'_>) -> Result<Vec<u32>> {
        match self {
            // A view of options (a list with variants): the multiple-choice
            // forms (`crate::choice`).
            Slicer::Greedy if ctx.items.classes().is_some() => Ok(crate::choice::greedy::greedy(
                &ctx.items,
                cands,
                budget.target,
            )),
            Slicer::Knapsack(k) if ctx.items.classes().is_some() => knapsack::choice::knapsack(
                &ctx.items,
                cands,
                budget.target,
                k.bucket_size,
                ctx.memory_limit,
            ),
            Slicer::Greedy => Ok(greedy(&ctx.items, cands, budget.target)),
            Slicer::Knapsack(k) => knapsack(
                &ctx.items,
                cands,
                budget.target,
                k.bucket_size,
                ctx.memory_limit,
            ),
            Slicer::Stream(batch) => Ok(stream(&ctx.items, cands, budget.target, *batch)),
            Slicer::Quota(q) => q.slice(cands, budget, ctx),
            Slicer::CountQuota(c) => c.slice(cands, budget, ctx),
            Slicer::CountKnapsack(c) => c.slice(cands, budget, ctx),
        }
    }

    /// This slicer or the first slicer nested in it that satisfies `pred`.
    pub fn find(&self, pred: &dyn Fn(&Slicer) -> bool) -> Option<&Slicer> {
        if pred(self) {
            return Some(self);
        }
        match self {
            Slicer::Quota(q) => q.inner.find(pred),
            Slicer::CountQuota(c) | Slicer::CountKnapsack(c) => c.inner.find(pred),
            _ => None,
        }
    }

    /// A short name for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Slicer::Greedy => "GreedySlice",
            Slicer::Knapsack(_) => "KnapsackSlice",
            Slicer::Quota(_) => "QuotaSlice",
            Slicer::CountQuota(_) => "CountQuotaSlice",
            Slicer::CountKnapsack(_) => "CountConstrainedKnapsackSlice",
            Slicer::Stream(_) => "StreamSlice",
        }
    }
}

/// StreamSlice over `cands` in their order, `batch` at a time: each batch's
/// candidates by score, taken while they fit what is left of `target`
/// (zero-token ones always); nothing after the target is spent. A list
/// with variants offers each item as pushed (its first option) only.
fn stream(items: &View<'_>, cands: &[u32], target: i64, batch: usize) -> Vec<u32> {
    let offered: Vec<u32> = match items.classes() {
        Some(_) => cands
            .iter()
            .copied()
            .filter(|&c| items.is_first_option(c))
            .collect(),
        None => cands.to_vec(),
    };
    let mut s = crate::stream::Stream::new(target, batch);
    for &c in &offered {
        // Candidates reach a slicer with tokens >= 0 and finite scores.
        match s.push(items.tokens(c), items.score(c)) {
            Ok(false) => {}
            Ok(true) | Err(_) => break,
        }
    }
    s.finish().iter().map(|&p| offered[p as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_looks_through_every_decorator() {
        let knapsack = || Slicer::Knapsack(Knapsack::new(10).unwrap());
        let is_knapsack = |s: &Slicer| matches!(s, Slicer::Knapsack(_));
        let quota = Slicer::Quota(Quota::new(knapsack(), Vec::new()).unwrap());
        let count = CountQuota::new(quota.clone(), Vec::new(), Scarcity::Degrade).unwrap();
        let nested = Slicer::CountQuota(count.clone());
        let cck =
            Slicer::CountKnapsack(CountQuota::knapsack(10, Vec::new(), Scarcity::Degrade).unwrap());
        for s in [&knapsack(), &quota, &nested, &cck] {
            assert_eq!(
                s.find(&is_knapsack).map(Slicer::name),
                Some("KnapsackSlice"),
                "{}",
                s.name()
            );
        }
        // The outermost match first; nothing found in a plain greedy.
        assert_eq!(
            nested.find(&|_| true).map(Slicer::name),
            Some("CountQuotaSlice")
        );
        assert!(Slicer::Greedy.find(&is_knapsack).is_none());
        assert!(quota.find(&|s| matches!(s, Slicer::Greedy)).is_none());
    }
}
