//! Items that shrink instead of vanish (`../shared/abi-text.md`, "Items that
//! shrink instead of vanish"): variants and truncatable items.
//!
//! A list with variants is sliced over *options*: each candidate (an item,
//! or a keep-together group's unit) is a class whose options are the
//! candidate as pushed (option 0) and one per variant number `v`. A unit's
//! option `v` has every member at its variant `v` when it has one, else as
//! pushed. The options form a [`View`] whose `classes` column names each
//! option's candidate; every slicer selects at most one option per class
//! (GreedySlice and KnapsackSlice through [`greedy`] and
//! `slicer::knapsack::choice`, the decorators by counting what their inner
//! slicer chose). [`Options::expand`] turns the chosen options back into
//! items with the variant each one takes. A list without variants never
//! builds any of this. [`fill`] is the step after the slicer that cuts a
//! truncatable item to fill what is left.

pub mod direct;
pub mod fill;
pub mod greedy;

use crate::items::{Items, View};
use crate::slicer::knapsack::scaled_value;

/// The options of a candidate list (see the module documentation).
#[derive(Debug)]
pub struct Options<'a> {
    tokens: Vec<i64>,
    scores: Vec<f64>,
    kinds: Vec<u32>,
    values: Vec<i64>,
    ties: Vec<f64>,
    /// The position, in the candidate list, of each option's candidate.
    class: Vec<u32>,
    /// The variant number of each option (0: as pushed).
    number: Vec<u8>,
    flat: Flat<'a>,
}

/// One selected item as a slicer chose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chosen {
    pub item: u32,
    /// The variant it takes (0: as pushed).
    pub variant: u8,
    /// The tokens it adds to the context.
    pub tokens: i64,
}

/// Every item's variants as (tokens, share of the score), from the item
/// store's column of them. A zero-token item has none (it is always
/// included as pushed).
#[derive(Debug, Clone, Copy)]
struct Flat<'a> {
    items: &'a Items,
    view: View<'a>,
}

impl Flat<'_> {
    /// Item `m`'s variants that count.
    #[inline]
    fn of(&self, m: u32) -> &[(i64, f64)] {
        match self.view.tokens(m) {
            0 => &[],
            _ => self.items.variant_shares(m),
        }
    }

    /// How many variants item `m` has that count.
    #[inline]
    fn count(&self, m: u32) -> usize {
        self.of(m).len()
    }

    /// Item `m`'s variant `v` as (tokens, share), when it has one that counts.
    #[inline]
    fn get(&self, m: u32, v: u8) -> Option<(i64, f64)> {
        self.of(m).get((v as usize).checked_sub(1)?).copied()
    }
}

impl<'a> Options<'a> {
    /// The options of the candidates `cands` of `base` (items, or units),
    /// in candidate order and then variant number. `items` holds the
    /// variants, `view` is the item-level view (scores as the Slice stage
    /// reads them), `members(p)` the items of candidate `cands[p]` in push
    /// order.
    pub fn build<'m>(
        items: &'a Items,
        view: View<'a>,
        base: View<'_>,
        cands: &[u32],
        members: impl Fn(usize) -> &'m [u32],
    ) -> Options<'a> {
        let flat = Flat { items, view };
        let most = |ms: &[u32]| ms.iter().map(|&m| flat.count(m)).max().unwrap_or(0);
        // Each column allocated once, at its length.
        let n: usize = (0..cands.len()).map(|p| 1 + most(members(p))).sum();
        let mut o = Options {
            tokens: Vec::with_capacity(n),
            scores: Vec::with_capacity(n),
            kinds: Vec::with_capacity(n),
            values: Vec::with_capacity(n),
            ties: Vec::with_capacity(n),
            class: Vec::with_capacity(n),
            number: Vec::with_capacity(n),
            flat,
        };
        for (p, &c) in cands.iter().enumerate() {
            let tie = base.ties()[c as usize];
            o.push(
                p as u32,
                0,
                base.tokens(c),
                base.score(c),
                base.value(c, scaled_value),
                base.kind(c),
                tie,
            );
            let ms = members(p);
            for v in 1..=most(ms) as u8 {
                let (mut tokens, mut score, mut value) = (0i64, 0f64, 0i64);
                for &m in ms {
                    let s = view.score(m);
                    let (t, s) = match flat.get(m, v) {
                        Some((t, share)) => (t, s * share),
                        None => (view.tokens(m), s),
                    };
                    tokens = tokens.saturating_add(t);
                    score = crate::group::saturating_sum(score, s);
                    value = value.saturating_add(scaled_value(s));
                }
                o.push(p as u32, v, tokens, score, value, base.kind(c), tie);
            }
        }
        o
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        class: u32,
        v: u8,
        tokens: i64,
        score: f64,
        value: i64,
        kind: u32,
        tie: f64,
    ) {
        self.class.push(class);
        self.number.push(v);
        self.tokens.push(tokens);
        self.scores.push(score);
        self.values.push(value);
        self.kinds.push(kind);
        self.ties.push(tie);
    }

    /// How many options.
    pub(crate) fn len(&self) -> usize {
        self.tokens.len()
    }

    /// The candidate position of option `o`.
    pub fn class(&self, o: u32) -> u32 {
        self.class[o as usize]
    }

    /// What a slicer reads of the options (kinds interned in `base`'s table).
    pub fn view<'b>(&'b self, base: View<'b>) -> View<'b> {
        View::of_columns(
            &self.tokens,
            &self.scores,
            &self.kinds,
            base.kind_table(),
            &self.values,
            &self.ties,
        )
        .with_classes(&self.class)
    }

    /// The items of the chosen options, in that order, each candidate's
    /// members in push order, with the variant each takes and its tokens.
    pub fn expand<'m>(
        &self,
        view: View<'_>,
        chosen: &[u32],
        members: impl Fn(usize) -> &'m [u32],
    ) -> Vec<Chosen> {
        let mut out = Vec::with_capacity(chosen.len());
        for &o in chosen {
            let (p, v) = (self.class[o as usize], self.number[o as usize]);
            for &m in members(p as usize) {
                out.push(match self.flat.get(m, v) {
                    Some((tokens, _)) => Chosen {
                        item: m,
                        variant: v,
                        tokens,
                    },
                    None => Chosen {
                        item: m,
                        variant: 0,
                        tokens: view.tokens(m),
                    },
                });
            }
        }
        out
    }
}

/// Test helper: items of (tokens, score, variants as (tokens, value)),
/// kind and content left unset.
#[cfg(test)]
pub(crate) fn test_items<V: AsRef<[(i64, f64)]>>(spec: &[(i64, f64, V)]) -> Items {
    let mut it = Items::new();
    for (i, (tokens, score, variants)) in spec.iter().enumerate() {
        let (tokens, score) = (*tokens, *score);
        it.push(crate::items::NewItem {
            tokens,
            score,
            kind: None,
        })
        .unwrap();
        for &(t, v) in variants.as_ref() {
            it.add_variant(i, t, v, None).unwrap();
        }
    }
    it
}

/// The classes of `cands` in a view of options: runs of consecutive
/// candidates of one class, as (start, end) positions in `cands`.
pub fn class_runs(classes: &[u32], cands: &[u32]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = 0;
    for p in 1..=cands.len() {
        if p == cands.len() || classes[cands[p] as usize] != classes[cands[start] as usize] {
            runs.push((start, p));
            start = p;
        }
    }
    debug_assert!(
        {
            let mut seen: Vec<u32> = runs.iter().map(|r| classes[cands[r.0] as usize]).collect();
            seen.sort_unstable();
            seen.windows(2).all(|w| w[0] != w[1])
        },
        "the options of a class are not consecutive"
    );
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::{Groups, Units};
    use crate::items::NewItem;

    /// Items of (tokens, score, group, variants as (tokens, value)).
    type Spec<'a> = &'a [(i64, f64, u64, &'a [(i64, f64)])];

    fn items(spec: Spec<'_>) -> Items {
        let mut it = Items::new();
        for (i, &(tokens, score, group, variants)) in spec.iter().enumerate() {
            it.push(NewItem {
                tokens,
                score,
                kind: None,
            })
            .unwrap();
            it.set_group(i, group).unwrap();
            for &(t, v) in variants {
                it.add_variant(i, t, v, None).unwrap();
            }
        }
        it
    }

    fn columns(o: &Options) -> Vec<(u32, u8, i64, f64, i64)> {
        (0..o.len())
            .map(|k| {
                (
                    o.class[k],
                    o.number[k],
                    o.tokens[k],
                    o.scores[k],
                    o.values[k],
                )
            })
            .collect()
    }

    #[test]
    fn each_item_gets_an_option_per_variant_and_zero_token_items_none() {
        let it = items(&[
            (100, 0.5, 0, &[(10, 0.5), (0, 0.25)]),
            (0, 0.9, 0, &[(5, 1.0)]),
            (30, 0.2, 0, &[]),
        ]);
        let view = it.view();
        let cands = [2u32, 0, 1];
        let o = Options::build(&it, view, view, &cands, |p| std::slice::from_ref(&cands[p]));
        assert_eq!(
            columns(&o),
            vec![
                (0, 0, 30, 0.2, 2000),
                (1, 0, 100, 0.5, 5000),
                (1, 1, 10, 0.25, 2500),
                (1, 2, 0, 0.125, 1250),
                (2, 0, 0, 0.9, 9000),
            ]
        );
        let v = o.view(view);
        assert_eq!(v.classes(), Some(&[0, 1, 1, 1, 2][..]));
        assert!(v.is_first_option(1) && !v.is_first_option(2) && v.is_first_option(4));
        assert_eq!((v.class(3), v.tokens(3), v.value(3, |_| -1)), (1, 0, 1250));
        // Back to items: option 3 is item 0 at variant 2, option 4 item 1.
        let chosen = o.expand(view, &[3, 4, 0], |p| std::slice::from_ref(&cands[p]));
        let got: Vec<_> = chosen
            .iter()
            .map(|c| (c.item, c.variant, c.tokens))
            .collect();
        assert_eq!(got, vec![(0, 2, 0), (1, 0, 0), (2, 0, 30)]);
        // Each column allocated once, at its length.
        assert_eq!((o.tokens.capacity(), o.number.capacity()), (5, 5));
    }

    #[test]
    fn a_group_has_an_option_per_variant_number() {
        // Group 7: items 0 (two variants) and 2 (one); item 1 alone.
        let it = items(&[
            (100, 0.5, 7, &[(10, 0.5), (20, 0.1)]),
            (40, 0.3, 0, &[]),
            (60, 0.4, 7, &[(6, 0.5)]),
        ]);
        let view = it.view();
        let groups = Groups::of(&it).unwrap();
        let units = Units::build(view, &groups, &[0, 1, 2], scaled_value, true).unwrap();
        let base = units.view(view);
        let cands: Vec<u32> = (0..units.len() as u32).collect();
        let o = Options::build(&it, view, base, &cands, |p| units.members(cands[p]));
        // The group first (its best member 0.5); option 1: both members at
        // variant 1; option 2: item 0 at variant 2, item 2 as pushed.
        let got = columns(&o);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!((got[0].0, got[0].1, got[0].2, got[0].4), (0, 0, 160, 9000));
        assert_eq!((got[1].1, got[1].2, got[1].4), (1, 16, 2500 + 2000));
        assert!((got[1].3 - 0.45).abs() < 1e-12);
        assert_eq!((got[2].1, got[2].2, got[2].4), (2, 80, 500 + 4000));
        assert_eq!((got[3].0, got[3].1, got[3].2), (1, 0, 40));
        let chosen = o.expand(view, &[2], |p| units.members(cands[p]));
        let got: Vec<_> = chosen
            .iter()
            .map(|c| (c.item, c.variant, c.tokens))
            .collect();
        assert_eq!(got, vec![(0, 2, 20), (2, 0, 60)]);
    }

    #[test]
    fn class_runs_are_the_runs_of_one_class() {
        let classes = [0u32, 0, 1, 2, 2, 2];
        assert_eq!(
            class_runs(&classes, &[0, 1, 2, 3, 4, 5]),
            vec![(0, 2), (2, 3), (3, 6)]
        );
        // A subset (a quota's partition) keeps its runs.
        assert_eq!(class_runs(&classes, &[1, 4, 5]), vec![(0, 1), (1, 3)]);
        assert!(class_runs(&classes, &[]).is_empty());
    }
}
