//! Keep-together groups (docs/groups.md): items that share a non-zero
//! group id are selected all together or not at all, and are placed next
//! to each other in push order.
//!
//! Grouping is a pre-pass. [`Groups`] maps each item to its group once per
//! call (O(N), one hash of each grouped item's id); [`Units`] turns a
//! Sort-ordered candidate list into *units*: an ungrouped item, or a whole
//! group as one candidate with its members' summed tokens, summed score,
//! summed knapsack value and its first member's kind. Every slicer runs
//! unchanged on the units (a [`View`] of them) and the selection is expanded
//! back to item indices, each group's members in push order. A list with no
//! grouped item never builds either.

use std::collections::HashMap;

use crate::error::{invalid, Result};
use crate::items::{Items, View};
use crate::sort::by_value_desc;

/// The groups of one item list.
#[derive(Debug, Clone)]
pub struct Groups {
    /// Dense group number + 1 of each item (0: ungrouped).
    of: Vec<u32>,
    /// The id of each dense group.
    ids: Vec<u64>,
    /// Members of group g: `members[start[g] .. start[g + 1]]`, push order.
    start: Vec<u32>,
    members: Vec<u32>,
    /// Summed tokens of each group, saturating at the i64 bounds.
    tokens: Vec<i64>,
    /// Whether a group has a member with a negative token count.
    negative: Vec<bool>,
    /// Whether a group has a pinned member.
    pinned: Vec<bool>,
}

/// The largest group id that `Groups::of` looks up in a table rather than a
/// hash map: ids up to twice the item count (the usual 1, 2, 3, ...) index
/// the table directly, any others go through the map. Only speed and memory
/// depend on it (every id is found either way), so .cargo/mutants.toml
/// leaves its mutants out (mutants-equivalent.md).
fn table_ids(items: usize) -> u64 {
    2 * items as u64 + 64
}

impl Groups {
    /// The groups of `items`, or `None` when no item is grouped.
    pub fn of(items: &Items) -> Option<Groups> {
        let column = items.groups();
        if column.iter().all(|&g| g == 0) {
            return None;
        }
        let mut of = vec![0u32; items.len()];
        let mut ids = Vec::new();
        let mut count = Vec::new();
        let small = table_ids(column.len());
        let mut table = vec![0u32; small as usize + 1];
        let mut dense: HashMap<u64, u32> = HashMap::new();
        for (i, &id) in column.iter().enumerate() {
            if id == 0 {
                continue;
            }
            let slot = match id <= small {
                true => &mut table[id as usize],
                false => dense.entry(id).or_insert(0),
            };
            if *slot == 0 {
                ids.push(id);
                count.push(0u32);
                *slot = ids.len() as u32;
            }
            let g = *slot - 1;
            count[g as usize] += 1;
            of[i] = g + 1;
        }
        // Counting sort of the grouped items by group: members in push order.
        let mut start = Vec::with_capacity(ids.len() + 1);
        start.push(0u32);
        for c in &count {
            start.push(start.last().unwrap() + c);
        }
        let mut next = start.clone();
        let mut members = vec![0u32; *start.last().unwrap() as usize];
        let view = items.view();
        let mut tokens = vec![0i64; ids.len()];
        let mut negative = vec![false; ids.len()];
        let mut pinned = vec![false; ids.len()];
        for (i, &g) in of.iter().enumerate() {
            if g == 0 {
                continue;
            }
            let (g, i) = (g as usize - 1, i as u32);
            members[next[g] as usize] = i;
            next[g] += 1;
            let t = view.tokens(i);
            tokens[g] = tokens[g].saturating_add(t);
            negative[g] |= t < 0;
            pinned[g] |= items.pinned(i);
        }
        Some(Groups {
            of,
            ids,
            start,
            members,
            tokens,
            negative,
            pinned,
        })
    }

    /// The dense group of item `i`, if it is grouped.
    #[inline]
    pub fn group(&self, i: u32) -> Option<usize> {
        match self.of[i as usize] {
            0 => None,
            g => Some(g as usize - 1),
        }
    }

    /// The caller's id of dense group `g`.
    pub fn id(&self, g: usize) -> u64 {
        self.ids[g]
    }

    /// The members of dense group `g`, in push order.
    pub fn members(&self, g: usize) -> &[u32] {
        &self.members[self.start[g] as usize..self.start[g + 1] as usize]
    }

    /// The items that stand or fall with `*i`: its group's members, or
    /// itself.
    pub fn unit<'s>(&'s self, i: &'s u32) -> &'s [u32] {
        match self.group(*i) {
            Some(g) => self.members(g),
            None => std::slice::from_ref(i),
        }
    }

    /// Summed tokens of dense group `g` (saturating).
    pub fn tokens(&self, g: usize) -> i64 {
        self.tokens[g]
    }

    /// The tokens of the unit of item `i`: its group's sum, or its own.
    pub fn unit_tokens(&self, items: View<'_>, i: u32) -> i64 {
        match self.group(i) {
            Some(g) => self.tokens[g],
            None => items.tokens(i),
        }
    }

    /// Whether item `i`'s group has a negative-token member (then no
    /// member is ever selected).
    pub fn negative(&self, i: u32) -> bool {
        self.group(i).is_some_and(|g| self.negative[g])
    }

    /// Whether item `i`'s group has a pinned member (then all are pinned).
    pub fn pinned(&self, i: u32) -> bool {
        self.group(i).is_some_and(|g| self.pinned[g])
    }
}

/// The units of a candidate list: the columns a slicer reads, by unit,
/// and the item that stands for each unit (its member first in Sort order;
/// its group gives the rest).
#[derive(Debug)]
pub struct Units<'g> {
    groups: &'g Groups,
    reps: Vec<u32>,
    tokens: Vec<i64>,
    scores: Vec<f64>,
    kinds: Vec<u32>,
    values: Vec<i64>,
    /// Each unit's best member's score (its Sort-stage key).
    ties: Vec<f64>,
}

impl<'g> Units<'g> {
    /// The units of the candidates `cands` (item indices, any order), in
    /// the order of each unit's first member in Sort order (score
    /// descending, then index): an ungrouped candidate, or a group whose
    /// members are all candidates (any other group is not a unit: none of
    /// its members can be selected). `value` is KnapsackSlice's integer
    /// value of a score.
    ///
    /// Sums and each group's best member are found in item order; then one
    /// Sort stage orders the units' best members: no pass in score order
    /// over the items, no copy of member lists. With `sort` false the units
    /// stay in the item order of their best members (their view's ties
    /// then give the Sort order's: GreedySlice needs no more).
    ///
    /// Errors: a group's tokens sum past `i64::MAX`.
    pub fn build(
        items: View<'_>,
        groups: &'g Groups,
        cands: &[u32],
        value: impl Fn(f64) -> i64,
        sort: bool,
    ) -> Result<Units<'g>> {
        let n = items.len();
        let mut present = vec![false; n];
        for &i in cands {
            present[i as usize] = true;
        }
        // Per group, in item order: candidates seen, the best member (first
        // in Sort order), summed tokens, score and value (members summed in
        // push order) and the first member's kind, side by side so one
        // cache line serves a group.
        #[derive(Clone, Copy)]
        struct Acc {
            tokens: Option<i64>,
            score: f64,
            value: i64,
            seen: u32,
            best: u32,
            kind: u32,
        }
        let mut acc = vec![
            Acc {
                tokens: Some(0),
                score: 0.0,
                value: 0,
                seen: 0,
                best: u32::MAX,
                kind: 0,
            };
            groups.ids.len()
        ];
        for i in 0..n as u32 {
            let Some(g) = groups.group(i) else { continue };
            if !present[i as usize] {
                continue;
            }
            let a = &mut acc[g];
            let s = items.score(i);
            if a.seen == 0 {
                a.kind = items.kind(i);
            }
            a.seen += 1;
            if a.best == u32::MAX || s > items.score(a.best) {
                a.best = i;
            }
            a.tokens = a.tokens.and_then(|t| t.checked_add(items.tokens(i)));
            a.score = saturating_sum(a.score, s);
            a.value = a.value.saturating_add(value(s));
        }
        // Each unit, in the item order of its best member: (item, tokens,
        // score, value, kind) and its sort key, the best member's score.
        let mut units: Vec<(u32, i64, f64, i64, u32)> = Vec::with_capacity(cands.len());
        let mut keys = Vec::with_capacity(cands.len());
        for i in 0..n as u32 {
            if !present[i as usize] {
                continue;
            }
            let s = items.score(i);
            match groups.group(i) {
                None => units.push((i, items.tokens(i), s, value(s), items.kind(i))),
                Some(g) => {
                    let a = acc[g];
                    if a.best != i || a.seen as usize != groups.members(g).len() {
                        continue;
                    }
                    let Some(tokens) = a.tokens else {
                        return overflow(groups, i);
                    };
                    units.push((i, tokens, a.score, a.value, a.kind));
                }
            }
            keys.push(s);
        }
        // The Sort stage over the best members: (score descending, index
        // ascending), the order of each unit's first member in Sort order.
        let order: Vec<u32> = match sort {
            true => by_value_desc(keys.iter().copied()),
            false => (0..units.len() as u32).collect(),
        };
        let mut u = Units {
            groups,
            reps: Vec::with_capacity(units.len()),
            tokens: Vec::with_capacity(units.len()),
            scores: Vec::with_capacity(units.len()),
            kinds: Vec::with_capacity(units.len()),
            values: Vec::with_capacity(units.len()),
            ties: Vec::with_capacity(units.len()),
        };
        for &p in &order {
            let (i, tokens, score, value, kind) = units[p as usize];
            u.reps.push(i);
            u.tokens.push(tokens);
            u.scores.push(score);
            u.values.push(value);
            u.kinds.push(kind);
            u.ties.push(keys[p as usize]);
        }
        Ok(u)
    }

    /// How many units.
    pub(crate) fn len(&self) -> usize {
        self.tokens.len()
    }

    /// The members of unit `u`, in push order.
    pub fn members(&self, u: u32) -> &[u32] {
        self.groups.unit(&self.reps[u as usize])
    }

    /// What a slicer reads of the units (kinds interned in `items`' table).
    pub fn view<'a>(&'a self, items: View<'a>) -> View<'a> {
        View::of_columns(
            &self.tokens,
            &self.scores,
            &self.kinds,
            items.kind_table(),
            &self.values,
            &self.ties,
        )
    }

    /// The item indices of `units`, in that order, each unit's members in
    /// push order.
    pub fn expand(&self, units: &[u32]) -> Vec<u32> {
        let mut out = Vec::with_capacity(units.len());
        for &u in units {
            for &m in self.groups.unit(&self.reps[u as usize]) {
                out.push(m);
            }
        }
        out
    }
}

/// `a + b` for finite scores, held to the finite range (a sum of many
/// huge scores must not become infinite, nor NaN after an opposite one).
pub fn saturating_sum(a: f64, b: f64) -> f64 {
    (a + b).clamp(-f64::MAX, f64::MAX)
}

fn overflow<T>(groups: &Groups, i: u32) -> Result<T> {
    let g = groups.group(i).expect("only a group sums tokens");
    let members = groups.members(g);
    let shown: Vec<String> = members.iter().take(8).map(|m| m.to_string()).collect();
    let more = if members.len() > 8 { ", ..." } else { "" };
    invalid!(
        "group {}: the tokens of its members (items {}{more}) sum past INT64_MAX; \
         a group's tokens must fit in int64",
        groups.id(g),
        shown.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::NewItem;

    fn items(spec: &[(i64, f64, u64)]) -> Items {
        let mut it = Items::new();
        for (i, &(tokens, score, group)) in spec.iter().enumerate() {
            it.push(NewItem {
                tokens,
                score,
                kind: None,
            })
            .unwrap();
            it.set_group(i, group).unwrap();
        }
        it
    }

    #[test]
    fn no_grouped_item_builds_nothing() {
        assert!(Groups::of(&items(&[(1, 0.1, 0), (2, 0.2, 0)])).is_none());
        assert!(Groups::of(&Items::new()).is_none());
    }

    #[test]
    fn members_are_in_push_order_and_summed() {
        let it = items(&[(1, 0.1, 7), (2, 0.2, 0), (3, 0.3, 9), (-4, 0.4, 7)]);
        let g = Groups::of(&it).unwrap();
        let seven = g.group(0).unwrap();
        assert_eq!(g.members(seven), &[0, 3]);
        assert_eq!(g.tokens(seven), -3);
        assert!(g.negative(3) && g.negative(0) && !g.negative(2) && !g.negative(1));
        assert_eq!(g.id(seven), 7);
        assert_eq!(g.unit(&1), &[1]);
        assert_eq!(g.unit_tokens(it.view(), 2), 3);
    }

    #[test]
    fn units_follow_the_first_member_in_cands_and_skip_incomplete_groups() {
        let it = items(&[
            (1, 0.1, 5),
            (2, 0.2, 0),
            (3, 0.3, 5),
            (4, 0.4, 6),
            (5, 0.5, 6),
        ]);
        let g = Groups::of(&it).unwrap();
        // Group 6 lacks item 4: not a unit.
        let u = Units::build(it.view(), &g, &[2, 1, 3, 0], |s| (s * 10.0) as i64, true).unwrap();
        assert_eq!(u.len(), 2);
        assert_eq!(u.expand(&[0, 1]), vec![0, 2, 1]);
        assert_eq!(u.expand(&[1, 0]), vec![1, 0, 2]);
        let v = u.view(it.view());
        assert_eq!((v.tokens(0), v.score(0)), (4, 0.1 + 0.3));
        assert_eq!(v.value(0, |_| unreachable!()), 1 + 3);
    }

    #[test]
    fn an_overflow_message_lists_at_most_eight_members() {
        for (n, more) in [(8usize, false), (9, true)] {
            let mut spec = vec![(i64::MAX / 2, 0.1, 5); n];
            spec[0].0 = i64::MAX;
            let it = items(&spec);
            let g = Groups::of(&it).unwrap();
            let cands: Vec<u32> = (0..n as u32).collect();
            let e = Units::build(it.view(), &g, &cands, |_| 0, true)
                .unwrap_err()
                .to_string();
            assert!(e.contains("items 0, 1, 2, 3, 4, 5, 6, 7"), "{e}");
            assert_eq!(e.contains(", ..."), more, "{n} members: {e}");
            assert!(!e.contains(", 8"), "{e}");
        }
    }

    #[test]
    fn a_group_whose_tokens_overflow_is_refused() {
        let it = items(&[(i64::MAX, 0.1, 3), (1, 0.2, 3)]);
        let g = Groups::of(&it).unwrap();
        let e = Units::build(it.view(), &g, &[0, 1], |_| 0, true).unwrap_err();
        assert!(e.to_string().contains("group 3"), "{e}");
        assert!(e.to_string().contains("items 0, 1"), "{e}");
    }
}
