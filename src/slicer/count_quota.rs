//! CountQuotaSlice and CountConstrainedKnapsackSlice (supplement 5 and 6):
//! absolute item-count requirements and caps per kind around an inner slicer.

use super::{Ctx, Knapsack, Shortfall, Slicer};
use crate::budget::SliceBudget;
use crate::error::{invalid, Error, Result};
use crate::kind;
use crate::sort::by_value_desc;
use std::collections::HashSet;

/// What to do when fewer items of a kind exist than it requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scarcity {
    /// Include what exists and record a shortfall.
    #[default]
    Degrade,
    /// Fail the slice call.
    Error,
}

/// One count requirement: `require` items of `kind` at least, `cap` at most.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountEntry {
    /// Spelling as configured (reported back in shortfalls).
    pub kind: String,
    pub require: u32,
    pub cap: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CountQuota {
    pub inner: Box<Slicer>,
    entries: Vec<CountEntry>,
    scarcity: Scarcity,
    /// CountConstrainedKnapsackSlice re-orders the inner output by score
    /// before the cap phase.
    reorder_by_score: bool,
}

const NO_ENTRY: u32 = u32::MAX;

fn validate_entries(entries: &[CountEntry]) -> Result<()> {
    let mut seen = HashSet::new();
    for (i, e) in entries.iter().enumerate() {
        kind::validate(&e.kind, &format_args!("entries[{i}].kind"))?;
        if e.cap == 0 && e.require > 0 {
            return invalid!(
                "cap_count 0 with require_count {} for kind {:?}: a kind capped at 0 cannot require items",
                e.require,
                e.kind
            );
        }
        if e.require > e.cap {
            return invalid!(
                "require_count {} > cap_count {} for kind {:?}",
                e.require,
                e.cap,
                e.kind
            );
        }
        if !seen.insert(kind::fold(&e.kind)) {
            return invalid!(
                "entries[{i}].kind {:?} configures a kind that an earlier entry configures",
                e.kind
            );
        }
    }
    Ok(())
}

impl CountQuota {
    /// CountQuotaSlice over `inner`, which must not be a KnapsackSlice.
    pub fn new(inner: Slicer, entries: Vec<CountEntry>, scarcity: Scarcity) -> Result<Self> {
        if let Slicer::Knapsack(_) = inner {
            return Err(Error::Unsupported(
                "inner is a KnapsackSlice: CountQuotaSlice cannot wrap it; \
                 use cupel_slicer_new_count_constrained_knapsack instead"
                    .into(),
            ));
        }
        validate_entries(&entries)?;
        Ok(CountQuota {
            inner: Box::new(inner),
            entries,
            scarcity,
            reorder_by_score: false,
        })
    }

    /// CountConstrainedKnapsackSlice with its own bucket size.
    pub fn knapsack(
        bucket_size: i64,
        entries: Vec<CountEntry>,
        scarcity: Scarcity,
    ) -> Result<Self> {
        let knapsack = Knapsack::new(bucket_size)?;
        validate_entries(&entries)?;
        Ok(CountQuota {
            inner: Box::new(Slicer::Knapsack(knapsack)),
            entries,
            scarcity,
            reorder_by_score: true,
        })
    }

    /// The entries as configured.
    pub fn entries(&self) -> &[CountEntry] {
        &self.entries
    }

    pub fn scarcity(&self) -> Scarcity {
        self.scarcity
    }

    /// The bucket size of a CountConstrainedKnapsackSlice's own knapsack.
    pub fn knapsack_bucket(&self) -> Option<i64> {
        match (&*self.inner, self.reorder_by_score) {
            (Slicer::Knapsack(k), true) => Some(k.bucket_size),
            _ => None,
        }
    }

    pub fn slice(&self, cands: &[u32], budget: SliceBudget, ctx: &mut Ctx<'_>) -> Result<Vec<u32>> {
        if cands.is_empty() || budget.target <= 0 {
            return Ok(Vec::new());
        }
        let items = ctx.items;
        let table = items.kind_table();
        // Entry of each interned kind (NO_ENTRY for kinds without one).
        let mut entry_of_kind = vec![NO_ENTRY; table.len()];
        for (e, entry) in self.entries.iter().enumerate() {
            if let Some(k) = table.lookup(&entry.kind) {
                entry_of_kind[k as usize] = e as u32;
            }
        }
        let entry_of = |i: u32| entry_of_kind[items.kind(i) as usize];

        // Phase 1: commit the first require_count items of each kind (cands
        // are in score order), then order the commits by entry.
        let mut counts = vec![0u32; self.entries.len()];
        let mut committed_flag = vec![false; cands.len()];
        let mut committed: Vec<(u32, u32)> = Vec::new(); // (entry, item)
                                                         // With options (a list with variants), a class commits its first
                                                         // option (the candidate as pushed) and its other options go too.
        let mut class_done = vec![false; items.len()];
        for (pos, &i) in cands.iter().enumerate() {
            let class = items.class(i) as usize;
            if class_done[class] {
                committed_flag[pos] = true;
                continue;
            }
            let e = entry_of(i);
            if e != NO_ENTRY && counts[e as usize] < self.entries[e as usize].require {
                class_done[class] = true;
                counts[e as usize] += 1;
                committed_flag[pos] = true;
                committed.push((e, i));
            }
        }
        committed.sort_by_key(|&(e, _)| e); // stable: score order within an entry
        for (e, entry) in self.entries.iter().enumerate() {
            if counts[e] < entry.require {
                match self.scarcity {
                    Scarcity::Error => {
                        return Err(Error::Scarcity(format!(
                            "kind {:?}: {} items available, require_count is {}",
                            entry.kind, counts[e], entry.require
                        )))
                    }
                    Scarcity::Degrade => ctx.shortfalls.push(Shortfall {
                        kind: entry.kind.clone(),
                        required: entry.require,
                        satisfied: counts[e],
                    }),
                }
            }
        }
        let mut output: Vec<u32> = committed.iter().map(|&(_, i)| i).collect();
        let pre_allocated = items.sum_tokens(&output);

        // Phase 2: the inner slicer on the residual candidates.
        let residual: Vec<u32> = cands
            .iter()
            .zip(&committed_flag)
            .filter(|&(_, &c)| !c)
            .map(|(&i, _)| i)
            .collect();
        let inner_budget = SliceBudget {
            max: budget.max,
            target: (budget.target.saturating_sub(pre_allocated))
                .max(0)
                .min(budget.max),
        };
        let mut inner_out = self.inner.slice(&residual, inner_budget, ctx)?;
        if self.reorder_by_score {
            let order = by_value_desc(inner_out.iter().map(|&i| items.score(i)));
            inner_out = order.into_iter().map(|p| inner_out[p as usize]).collect();
        }

        // Phase 3: caps, counting from the Phase 1 counts.
        for i in inner_out {
            let e = entry_of(i);
            if e != NO_ENTRY {
                if counts[e as usize] >= self.entries[e as usize].cap {
                    ctx.cap_excluded.push(i);
                    continue;
                }
                counts[e as usize] += 1;
            }
            output.push(i);
        }
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::Items;

    fn e(kind: &str, require: u32, cap: u32) -> CountEntry {
        CountEntry {
            kind: kind.into(),
            require,
            cap,
        }
    }

    struct Out {
        selected: Vec<u32>,
        shortfalls: Vec<Shortfall>,
        cap_excluded: Vec<u32>,
    }

    fn run(s: &Slicer, spec: &[(i64, f64, &str)], target: i64) -> Result<Out> {
        let it = Items::from_spec(spec);
        let sorted = crate::sort::sort_stage(&it.view());
        let mut ctx = Ctx::new(it.view(), usize::MAX);
        let selected = s.slice(
            &sorted,
            SliceBudget {
                max: target,
                target,
            },
            &mut ctx,
        )?;
        Ok(Out {
            selected,
            shortfalls: ctx.shortfalls,
            cap_excluded: ctx.cap_excluded,
        })
    }

    fn cq(entries: Vec<CountEntry>, scarcity: Scarcity) -> Slicer {
        Slicer::CountQuota(CountQuota::new(Slicer::Greedy, entries, scarcity).unwrap())
    }

    #[test]
    fn validation() {
        let g = || Slicer::Greedy;
        let err = CountQuota::new(g(), vec![e("tool", 3, 2)], Scarcity::Degrade).unwrap_err();
        assert_eq!(
            err.to_string(),
            "require_count 3 > cap_count 2 for kind \"tool\""
        );
        assert!(CountQuota::new(g(), vec![e("tool", 1, 0)], Scarcity::Degrade).is_err());
        assert!(CountQuota::new(g(), vec![e("tool", 0, 0)], Scarcity::Degrade).is_ok());
        assert!(CountQuota::new(g(), vec![e("a", 0, 1), e("A", 0, 1)], Scarcity::Degrade).is_err());
        assert!(CountQuota::new(g(), vec![e("", 0, 1)], Scarcity::Degrade).is_err());
        let k = Slicer::Knapsack(Knapsack::new(1).unwrap());
        assert!(matches!(
            CountQuota::new(k, vec![], Scarcity::Degrade),
            Err(Error::Unsupported(_))
        ));
        assert!(CountQuota::knapsack(0, vec![], Scarcity::Degrade).is_err());
    }

    #[test]
    fn empty_input_or_zero_target_gives_nothing_even_with_error_scarcity() {
        let s = cq(vec![e("tool", 2, 4)], Scarcity::Error);
        assert!(run(&s, &[], 100).unwrap().selected.is_empty());
        assert!(run(&s, &[(10, 0.5, "tool")], 0)
            .unwrap()
            .selected
            .is_empty());
    }

    #[test]
    fn committed_items_come_first_in_entry_order_and_may_exceed_budget() {
        let s = cq(vec![e("b", 1, 5), e("a", 1, 5)], Scarcity::Degrade);
        let out = run(&s, &[(80, 0.9, "a"), (80, 0.5, "b"), (10, 0.4, "c")], 100).unwrap();
        // b committed first (entry order), then a; residual target max(0, 100-160)=0
        assert_eq!(out.selected, vec![1, 0]);
    }

    #[test]
    fn shortfall_recorded_with_entry_spelling() {
        let s = cq(vec![e("TOOL", 3, 5)], Scarcity::Degrade);
        let out = run(&s, &[(100, 0.9, "tool")], 1000).unwrap();
        assert_eq!(out.selected, vec![0]);
        assert_eq!(
            out.shortfalls,
            vec![Shortfall {
                kind: "TOOL".into(),
                required: 3,
                satisfied: 1
            }]
        );
    }

    #[test]
    fn scarcity_error_fails_also_for_absent_kinds() {
        let s = cq(vec![e("memory", 1, 5)], Scarcity::Error);
        let err = run(&s, &[(100, 0.9, "tool")], 1000).err().unwrap();
        assert_eq!(
            err,
            Error::Scarcity("kind \"memory\": 0 items available, require_count is 1".into())
        );
    }

    #[test]
    fn caps_count_from_phase_one() {
        let s = cq(vec![e("tool", 2, 2)], Scarcity::Degrade);
        let spec = [
            (100, 0.9, "tool"),
            (100, 0.7, "tool"),
            (100, 0.6, "tool"),
            (100, 0.4, "tool"),
        ];
        let out = run(&s, &spec, 1000).unwrap();
        assert_eq!(out.selected, vec![0, 1]);
        assert_eq!(out.cap_excluded, vec![2, 3]);
    }

    #[test]
    fn kinds_without_entry_are_never_capped() {
        let s = cq(vec![e("tool", 0, 1)], Scarcity::Degrade);
        let spec = [
            (10, 0.9, "msg"),
            (10, 0.8, "msg"),
            (10, 0.7, "tool"),
            (10, 0.6, "tool"),
        ];
        let out = run(&s, &spec, 1000).unwrap();
        assert_eq!(out.selected, vec![0, 1, 2]);
        assert_eq!(out.cap_excluded, vec![3]);
    }

    #[test]
    fn count_knapsack_reorders_by_score_before_caps() {
        let s = Slicer::CountKnapsack(
            CountQuota::knapsack(1, vec![e("tool", 0, 1)], Scarcity::Degrade).unwrap(),
        );
        // Knapsack reconstruction returns the lower-score item first; the
        // re-order makes the cap keep the best one.
        let out = run(&s, &[(10, 0.9, "tool"), (10, 0.3, "tool")], 100).unwrap();
        assert_eq!(out.selected, vec![0]);
        assert_eq!(out.cap_excluded, vec![1]);
    }
}
