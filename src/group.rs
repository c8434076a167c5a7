//! Keep-together groups (README "Groups"): items that share a non-zero
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

impl Groups {
    /// The groups of `items`, or `None` when no item is grouped.
    pub fn of(items: &Items) -> Option<Groups> {
        let column = items.groups();
        if column.iter().all(|&g| g == 0) {
            return None;
        }
        let mut dense: HashMap<u64, u32> = HashMap::new();
        let mut of = vec![0u32; items.len()];
        let mut ids = Vec::new();
        let mut count = Vec::new();
        for (i, &id) in column.iter().enumerate() {
            if id == 0 {
                continue;
            }
            let g = *dense.entry(id).or_insert_with(|| {
                ids.push(id);
                count.push(0u32);
                ids.len() as u32 - 1
            });
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

/// The units of a candidate list: the columns a slicer reads, by unit.
#[derive(Debug, Default)]
pub struct Units {
    tokens: Vec<i64>,
    scores: Vec<f64>,
    kinds: Vec<u32>,
    values: Vec<i64>,
    /// Members of unit u: `members[start[u] .. start[u + 1]]`, push order.
    start: Vec<u32>,
    members: Vec<u32>,
}

impl Units {
    /// The units of `cands` (item indices in Sort-stage order), in the
    /// order of each unit's first member in `cands`. A group whose members
    /// are not all candidates is not a unit (none of its members can be
    /// selected). `value` is KnapsackSlice's integer value of a score.
    ///
    /// Errors: a group's tokens sum past `i64::MAX`.
    pub fn build(
        items: View<'_>,
        groups: &Groups,
        cands: &[u32],
        value: impl Fn(f64) -> i64,
    ) -> Result<Units> {
        let mut present = vec![0u32; groups.ids.len()];
        for &i in cands {
            if let Some(g) = groups.group(i) {
                present[g] += 1;
            }
        }
        let mut u = Units {
            start: vec![0],
            ..Units::default()
        };
        for &i in cands {
            let members = match groups.group(i) {
                None => std::slice::from_ref(&i),
                Some(g) if present[g] as usize == groups.members(g).len() => {
                    // Mark the group done: later members add nothing.
                    present[g] = u32::MAX;
                    groups.members(g)
                }
                Some(_) => continue,
            };
            let mut tokens = 0i64;
            let (mut score, mut value_sum) = (0.0, 0i64);
            for &m in members {
                tokens = match tokens.checked_add(items.tokens(m)) {
                    Some(t) => t,
                    None => return overflow(groups, i),
                };
                score = saturating_sum(score, items.score(m));
                value_sum = value_sum.saturating_add(value(items.score(m)));
            }
            u.tokens.push(tokens);
            u.scores.push(score);
            u.kinds.push(items.kind(members[0]));
            u.values.push(value_sum);
            u.members.extend_from_slice(members);
            u.start.push(u.members.len() as u32);
        }
        Ok(u)
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// What a slicer reads of the units (kinds interned in `items`' table).
    pub fn view<'a>(&'a self, items: View<'a>) -> View<'a> {
        View::of_columns(
            &self.tokens,
            &self.scores,
            &self.kinds,
            items.kind_table(),
            &self.values,
        )
    }

    /// The item indices of `units`, in that order, each unit's members in
    /// push order.
    pub fn expand(&self, units: &[u32]) -> Vec<u32> {
        let mut out = Vec::with_capacity(units.len());
        for &u in units {
            let u = u as usize;
            out.extend_from_slice(
                &self.members[self.start[u] as usize..self.start[u + 1] as usize],
            );
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
        let u = Units::build(it.view(), &g, &[2, 1, 3, 0], |s| (s * 10.0) as i64).unwrap();
        assert_eq!(u.len(), 2);
        assert_eq!(u.expand(&[0, 1]), vec![0, 2, 1]);
        assert_eq!(u.expand(&[1, 0]), vec![1, 0, 2]);
        let v = u.view(it.view());
        assert_eq!((v.tokens(0), v.score(0)), (4, 0.1 + 0.3));
        assert_eq!(v.value(0, |_| unreachable!()), 1 + 3);
    }

    #[test]
    fn a_group_whose_tokens_overflow_is_refused() {
        let it = items(&[(i64::MAX, 0.1, 3), (1, 0.2, 3)]);
        let g = Groups::of(&it).unwrap();
        let e = Units::build(it.view(), &g, &[0, 1], |_| 0).unwrap_err();
        assert!(e.to_string().contains("group 3"), "{e}");
        assert!(e.to_string().contains("items 0, 1"), "{e}");
    }
}
