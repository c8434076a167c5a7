//! QuotaSlice (spec 004, supplement 4): budget fairness across kinds.

use super::{Ctx, Slicer};
use crate::budget::SliceBudget;
use crate::error::{invalid, Result};
use crate::kind;
use crate::sort::desc_bits;
use std::collections::HashMap;

/// Tolerance on the sum of require percentages (supplement 4).
const REQUIRE_SUM_TOLERANCE: f64 = 1e-9;

/// One validated quota: percentages of the target budget.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaEntry {
    /// Spelling as configured.
    pub kind: String,
    pub require_percent: f64,
    pub cap_percent: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Quota {
    pub inner: Box<Slicer>,
    entries: Vec<QuotaEntry>,
    /// folded kind -> entry index
    by_kind: HashMap<String, usize>,
}

/// floor(percent / 100.0 * target), clamped to [0, target] (the f64 product
/// of a large target may round above it).
fn percent_of(percent: f64, target: i64) -> i64 {
    ((percent / 100.0 * target as f64).floor() as i64).clamp(0, target)
}

/// floor(u * m / d) for m <= d, d > 0, exact for any u64 and u128 inputs.
fn mul_div_floor(u: u64, m: u128, d: u128) -> u64 {
    debug_assert!(m <= d && d > 0);
    if let Some(p) = (u as u128).checked_mul(m) {
        return (p / d) as u64;
    }
    // Long multiplication, one bit of u at a time; rem < d throughout.
    let (mut q, mut rem) = (0u64, 0u128);
    for bit in (0..64).rev() {
        q <<= 1;
        // rem < d <= 2^127 after the first doubling would overflow only if d > 2^127.
        let (doubled, carry) = rem.overflowing_add(rem);
        rem = doubled;
        if carry || rem >= d {
            rem = rem.wrapping_sub(d);
            q += 1;
        }
        if (u >> bit) & 1 == 1 {
            let (sum, carry) = rem.overflowing_add(m);
            rem = sum;
            if carry || rem >= d {
                rem = rem.wrapping_sub(d);
                q += 1;
            }
        }
    }
    q
}

impl Quota {
    pub fn new(inner: Slicer, entries: Vec<QuotaEntry>) -> Result<Self> {
        let mut by_kind = HashMap::new();
        let mut require_sum = 0.0;
        for (i, e) in entries.iter().enumerate() {
            kind::validate(&e.kind, &format_args!("quotas[{i}].kind"))?;
            for (name, v) in [
                ("require_percent", e.require_percent),
                ("cap_percent", e.cap_percent),
            ] {
                if !v.is_finite() || !(0.0..=100.0).contains(&v) {
                    return invalid!(
                        "quotas[{i}].{name} is {v} for kind {:?}; it must be finite and in [0, 100]",
                        e.kind
                    );
                }
            }
            if e.require_percent > e.cap_percent {
                return invalid!(
                    "require_percent {} > cap_percent {} for kind {:?}",
                    e.require_percent,
                    e.cap_percent,
                    e.kind
                );
            }
            if let Some(first) = by_kind.insert(kind::fold(&e.kind), i) {
                return invalid!(
                    "quotas[{i}].kind {:?} configures the same kind as quotas[{first}].kind {:?}",
                    e.kind,
                    entries[first].kind
                );
            }
            require_sum += e.require_percent;
        }
        if require_sum > 100.0 + REQUIRE_SUM_TOLERANCE {
            return invalid!("the require percentages sum to {require_sum}, over 100");
        }
        Ok(Quota {
            inner: Box::new(inner),
            entries,
            by_kind,
        })
    }

    /// The entries as configured.
    pub fn entries(&self) -> &[QuotaEntry] {
        &self.entries
    }

    pub fn slice(&self, cands: &[u32], budget: SliceBudget, ctx: &mut Ctx<'_>) -> Result<Vec<u32>> {
        let target = budget.target;
        if cands.is_empty() || target <= 0 {
            return Ok(Vec::new());
        }
        let items = ctx.items;

        // Phase 1: partition by kind in order of first appearance in the
        // Sort stage's order, as one buffer of positions grouped by
        // partition (a counting sort). A partition's first appearance is its
        // candidate of least (Sort-stage key descending, position): the
        // first one when `cands` is in Sort order, and the same candidate
        // when it is in item order (the Engine skips the Sort stage for a
        // QuotaSlice over GreedySlice, which needs no order either).
        let ties = items.ties();
        let mut part_of_kind = vec![u32::MAX; items.kind_table().len()];
        let mut part_kinds: Vec<u32> = Vec::new();
        let mut part_len: Vec<usize> = Vec::new();
        let mut part_first: Vec<(u64, usize)> = Vec::new();
        // Phase 2: candidate token mass per partition, in 128 bits.
        let mut mass: Vec<u128> = Vec::new();
        for (pos, &i) in cands.iter().enumerate() {
            let k = items.kind(i) as usize;
            let first = (desc_bits(ties[i as usize]), pos);
            if part_of_kind[k] == u32::MAX {
                part_of_kind[k] = part_kinds.len() as u32;
                part_kinds.push(k as u32);
                part_len.push(0);
                part_first.push(first);
                mass.push(0);
            }
            let p = part_of_kind[k] as usize;
            part_len[p] += 1;
            part_first[p] = part_first[p].min(first);
            // A class of options weighs as its candidate was pushed.
            if items.is_first_option(i) {
                mass[p] += items.tokens(i) as u128;
            }
        }
        // Partitions in order of first appearance.
        let mut by_first: Vec<usize> = (0..part_kinds.len()).collect();
        by_first.sort_unstable_by_key(|&p| part_first[p]);
        let mut rank = vec![0; by_first.len()];
        for (r, &p) in by_first.iter().enumerate() {
            rank[p] = r;
        }
        for k in part_of_kind.iter_mut().filter(|k| **k != u32::MAX) {
            *k = rank[*k as usize] as u32;
        }
        part_kinds = by_first.iter().map(|&p| part_kinds[p]).collect();
        part_len = by_first.iter().map(|&p| part_len[p]).collect();
        mass = by_first.iter().map(|&p| mass[p]).collect();
        let mut start: Vec<usize> = Vec::with_capacity(part_len.len() + 1);
        start.push(0);
        for len in &part_len {
            start.push(start.last().unwrap() + len);
        }
        let mut fill = start.clone();
        let mut grouped = vec![0u32; cands.len()];
        for &i in cands {
            let p = part_of_kind[items.kind(i) as usize] as usize;
            grouped[fill[p]] = i;
            fill[p] += 1;
        }

        // Phase 3: DISTRIBUTE-BUDGET.
        let entry_of: Vec<Option<&QuotaEntry>> = part_kinds
            .iter()
            .map(|&k| {
                let name = items.kind_table().name(k);
                self.by_kind
                    .get(&kind::fold(name))
                    .map(|&e| &self.entries[e])
            })
            .collect();
        let total_required: i128 = self
            .entries
            .iter()
            .map(|e| percent_of(e.require_percent, target) as i128)
            .sum();
        let unassigned = (target as i128 - total_required).max(0) as u64;
        let require_cap = |e: Option<&QuotaEntry>| match e {
            Some(e) => (
                percent_of(e.require_percent, target),
                percent_of(e.cap_percent, target),
            ),
            None => (0, target),
        };
        let total_mass: u128 = (0..part_kinds.len())
            .filter(|&p| {
                let (req, cap) = require_cap(entry_of[p]);
                cap > req
            })
            .map(|p| mass[p])
            .sum();

        // Phase 4: per-kind slicing, in partition order.
        let mut selected = Vec::new();
        for p in 0..part_kinds.len() {
            let (req, cap) = require_cap(entry_of[p]);
            let proportional = if total_mass > 0 && cap > req {
                mul_div_floor(unassigned, mass[p], total_mass) as i64
            } else {
                0
            };
            let kind_budget = req.saturating_add(proportional).min(cap);
            if kind_budget <= 0 {
                continue;
            }
            let sub = SliceBudget {
                max: cap,
                target: kind_budget,
            };
            let part = &grouped[start[p]..start[p + 1]];
            selected.extend(self.inner.slice(part, sub, ctx)?);
        }
        Ok(selected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::Items;

    fn entry(kind: &str, require: f64, cap: f64) -> QuotaEntry {
        QuotaEntry {
            kind: kind.into(),
            require_percent: require,
            cap_percent: cap,
        }
    }

    fn run(q: &Quota, spec: &[(i64, f64, &str)], target: i64) -> Vec<u32> {
        let it = Items::from_spec(spec);
        let sorted = crate::sort::sort_stage(&it.view());
        let mut ctx = Ctx::new(it.view(), usize::MAX);
        q.slice(
            &sorted,
            SliceBudget {
                max: target,
                target,
            },
            &mut ctx,
        )
        .unwrap()
    }

    #[test]
    fn mul_div_is_exact() {
        assert_eq!(mul_div_floor(700, 400, 1200), 233);
        let big = 1u128 << 100;
        assert_eq!(mul_div_floor(u64::MAX, big, big), u64::MAX);
        assert_eq!(mul_div_floor(u64::MAX, big / 2, big), u64::MAX / 2);
        assert_eq!(mul_div_floor(u64::MAX, 1, u128::MAX), 0);
        assert_eq!(
            mul_div_floor(1 << 62, (1 << 126) + 3, (1 << 127) - 1),
            1 << 61
        );
        // cross-check against u128 arithmetic where it fits
        for (u, m, d) in [(12345u64, 999u128, 1000u128), (u64::MAX, 3, 7), (1, 1, 1)] {
            assert_eq!(mul_div_floor(u, m, d) as u128, u as u128 * m / d);
        }
    }

    #[test]
    fn validation() {
        let g = || Slicer::Greedy;
        assert!(Quota::new(g(), vec![entry("a", 60.0, 40.0)]).is_err());
        let e = Quota::new(g(), vec![entry("Message", 60.0, 40.0)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "require_percent 60 > cap_percent 40 for kind \"Message\""
        );
        assert!(Quota::new(g(), vec![entry("a", 60.0, 100.0), entry("b", 41.0, 100.0)]).is_err());
        assert!(Quota::new(g(), vec![entry("a", f64::NAN, 100.0)]).is_err());
        assert!(Quota::new(g(), vec![entry("a", 0.0, 100.0000001)]).is_err());
        assert!(Quota::new(g(), vec![entry("a", -1e-300, 10.0)]).is_err());
        assert!(Quota::new(g(), vec![entry("a", 1.0, 10.0), entry("A", 1.0, 10.0)]).is_err());
        assert!(Quota::new(g(), vec![entry(" ", 1.0, 10.0)]).is_err());
        // 34.6 + 32.2 + 33.2 exceeds 100 only by rounding: accepted.
        assert!(Quota::new(
            g(),
            vec![
                entry("a", 34.6, 100.0),
                entry("b", 32.2, 100.0),
                entry("c", 33.2, 100.0)
            ]
        )
        .is_ok());
    }

    #[test]
    fn spec_conformance_example() {
        let q = Quota::new(
            Slicer::Greedy,
            vec![
                entry("SystemPrompt", 30.0, 50.0),
                entry("Message", 0.0, 40.0),
            ],
        )
        .unwrap();
        let items = [
            (200, 0.9, "SystemPrompt"),
            (200, 0.5, "SystemPrompt"),
            (300, 0.8, "Message"),
            (300, 0.3, "Message"),
            (200, 0.7, "Document"),
        ];
        // sorted: sys-a(0), msg-a(2), doc-a(4), sys-b(1), msg-b(3): partitions sys, msg, doc
        assert_eq!(run(&q, &items, 1000), vec![0, 1, 2]);
    }

    #[test]
    fn no_quotas_gives_proportional_budgets() {
        let q = Quota::new(Slicer::Greedy, vec![]).unwrap();
        // masses 600 and 400 of 1000 target 500: budgets 300 / 200
        let items = [
            (300, 0.9, "a"),
            (300, 0.8, "a"),
            (200, 0.7, "b"),
            (200, 0.6, "b"),
        ];
        assert_eq!(run(&q, &items, 500), vec![0, 2]);
    }

    #[test]
    fn require_100_takes_everything() {
        let q = Quota::new(Slicer::Greedy, vec![entry("a", 100.0, 100.0)]).unwrap();
        let items = [(100, 0.9, "b"), (100, 0.5, "a"), (100, 0.4, "a")];
        assert_eq!(run(&q, &items, 200), vec![1, 2]);
    }

    #[test]
    fn cap_zero_excludes_kind_even_zero_token_items() {
        let q = Quota::new(Slicer::Greedy, vec![entry("a", 0.0, 0.0)]).unwrap();
        let items = [(0, 0.9, "a"), (10, 0.5, "b")];
        assert_eq!(run(&q, &items, 100), vec![1]);
    }

    #[test]
    fn zero_mass_kind_gets_only_its_require() {
        let q = Quota::new(Slicer::Greedy, vec![entry("z", 10.0, 100.0)]).unwrap();
        // z has only zero-token items: budget = require 10 > 0, so included.
        let items = [(0, 0.9, "z"), (50, 0.5, "b")];
        assert_eq!(run(&q, &items, 100), vec![0, 1]);
        // without a require it gets budget 0 and is skipped
        let q = Quota::new(Slicer::Greedy, vec![]).unwrap();
        assert_eq!(run(&q, &items, 100), vec![1]);
    }

    #[test]
    fn non_positive_target_selects_nothing() {
        // Not even zero-token items of a required kind (a negative target
        // would make every percentage of it an empty range).
        let q = Quota::new(Slicer::Greedy, vec![entry("z", 10.0, 100.0)]).unwrap();
        let items = [(0, 0.9, "z"), (50, 0.5, "b")];
        for target in [0, -5, i64::MIN] {
            assert!(run(&q, &items, target).is_empty(), "target {target}");
        }
    }

    #[test]
    fn kinds_compare_case_insensitively() {
        let q = Quota::new(Slicer::Greedy, vec![entry("MESSAGE", 0.0, 10.0)]).unwrap();
        let items = [(50, 0.9, "message"), (5, 0.1, "Message")];
        // one partition "message", capped at 10 tokens
        assert_eq!(run(&q, &items, 100), vec![1]);
    }

    #[test]
    fn huge_token_masses_are_exact() {
        let q = Quota::new(Slicer::Greedy, vec![]).unwrap();
        let big = 1i64 << 60;
        let items = [(big, 0.9, "a"), (big, 0.8, "a"), (big, 0.7, "b")];
        // masses 2^61 and 2^60, target 3 * 2^60: budgets exactly 2^61 and 2^60
        assert_eq!(run(&q, &items, 3 * big), vec![0, 1, 2]);
    }
}
