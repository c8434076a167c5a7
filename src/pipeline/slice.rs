//! Stage 5, Slice (`spec/cupel/pipeline/slice.md`): the effective budget,
//! then the slicer over the Sort stage's order. [`Engine::slice`] is one
//! `cupel_slice` call (Sort and Slice on the pushed scores, negative-token
//! items left out as Classify would); [`Engine::slice_sorted`] is the
//! pipeline's Slice stage. Also budget simulation (supplement 8), which runs
//! the same path repeatedly.

use crate::budget::{Budget, SliceBudget};
use crate::choice::{Chosen, Options};
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
    /// The selected items not included as pushed: a variant chosen, or a
    /// cut (`crate::choice`). Empty for a list without either.
    pub shrunk: ShrunkMap,
}

/// How a selected item is included when not as pushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shrunk {
    /// The variant (0: the item itself, cut).
    pub variant: u8,
    /// The tokens it adds to the context.
    pub tokens: i64,
    /// The kept byte ranges of its content, `[0, head_end)` and
    /// `[tail_start, len)`, when it was cut.
    pub cut: Option<(usize, usize)>,
}

/// The selected items not included as pushed, by item index: a map kept as
/// a vector sorted by item (a slicer's choice builds it at once; a few
/// cuts are inserted after).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShrunkMap(Vec<(u32, Shrunk)>);

impl ShrunkMap {
    /// From entries in increasing item order, each item once.
    fn from_sorted(entries: impl Iterator<Item = (u32, Shrunk)>) -> ShrunkMap {
        let map = ShrunkMap(entries.collect());
        debug_assert!(map.0.windows(2).all(|w| w[0].0 < w[1].0));
        map
    }

    pub fn get(&self, i: &u32) -> Option<&Shrunk> {
        let at = self.0.binary_search_by_key(i, |e| e.0).ok()?;
        Some(&self.0[at].1)
    }

    /// Sets item `i`'s entry; returns the one it replaces.
    pub fn insert(&mut self, i: u32, s: Shrunk) -> Option<Shrunk> {
        match self.0.binary_search_by_key(&i, |e| e.0) {
            Ok(at) => Some(std::mem::replace(&mut self.0[at].1, s)),
            Err(at) => {
                self.0.insert(at, (i, s));
                None
            }
        }
    }

    /// The entries in increasing item order.
    pub fn iter(&self) -> impl Iterator<Item = (&u32, &Shrunk)> {
        self.0.iter().map(|(i, s)| (i, s))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Index<&u32> for ShrunkMap {
    type Output = Shrunk;

    fn index(&self, i: &u32) -> &Shrunk {
        self.get(i).expect("an item in the map")
    }
}

impl FromIterator<(u32, Shrunk)> for ShrunkMap {
    /// Entries in any order; of two for one item, the later one stays.
    fn from_iter<I: IntoIterator<Item = (u32, Shrunk)>>(entries: I) -> ShrunkMap {
        let mut all: Vec<(u32, Shrunk)> = entries.into_iter().collect();
        // Stable: of equal items the later stays last, and is kept.
        all.sort_by_key(|e| e.0);
        all.reverse();
        all.dedup_by_key(|e| e.0);
        all.reverse();
        ShrunkMap(all)
    }
}

impl Outcome {
    /// The tokens selected item `i` adds to the context.
    pub fn tokens_of(&self, items: View<'_>, i: u32) -> i64 {
        match self.shrunk.get(&i) {
            Some(s) => s.tokens,
            None => items.tokens(i),
        }
    }
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
        variants: Option<&Items>,
    ) -> Result<Outcome> {
        if let Some(all) = variants {
            return self.slice_options(all, items, sorted, effective, groups);
        }
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
            shrunk: ShrunkMap::default(),
        })
    }

    /// [`Engine::slice_sorted`] for a list with variants (`all`): the
    /// slicer runs on the options of the candidates (`crate::choice`), the
    /// candidates being the items of `sorted` or, with `groups`, their
    /// units in Sort order.
    fn slice_options(
        &self,
        all: &Items,
        items: View<'_>,
        sorted: &[u32],
        effective: SliceBudget,
        groups: Option<&Groups>,
    ) -> Result<Outcome> {
        if groups.is_none() && matches!(self.slicer, Slicer::Greedy) {
            // Straight from the item store (`crate::choice::direct`).
            let chosen = crate::choice::direct::greedy(all, &items, Some(sorted), effective.target);
            return Ok(Self::outcome_chosen(
                &chosen,
                effective,
                Vec::new(),
                Vec::new(),
            ));
        }
        if let (None, Slicer::Knapsack(k)) = (groups, &self.slicer) {
            // Straight from the item store, when its options can be numbered.
            let direct = crate::slicer::knapsack::choice::knapsack_items(
                all,
                &items,
                sorted,
                effective.target,
                k.bucket_size,
                self.memory_limit,
            );
            if let Some(chosen) = direct {
                return Ok(Self::outcome_chosen(
                    &chosen?,
                    effective,
                    Vec::new(),
                    Vec::new(),
                ));
            }
        }
        let units = match groups {
            Some(g) => Some(Units::build(items, g, sorted, scaled_value, true)?),
            None => None,
        };
        let (base, cands): (View<'_>, Vec<u32>) = match &units {
            Some(u) => (u.view(items), (0..u.len() as u32).collect()),
            None => (items, sorted.to_vec()),
        };
        let members = |p: usize| -> &[u32] {
            match &units {
                Some(u) => u.members(cands[p]),
                None => std::slice::from_ref(&cands[p]),
            }
        };
        let options = Options::build(all, items, base, &cands, members);
        let mut ctx = Ctx::new(options.view(base), self.memory_limit);
        let every: Vec<u32> = (0..options.len() as u32).collect();
        let chosen = self.slicer.slice(&every, effective, &mut ctx)?;
        let chosen = options.expand(items, &chosen, members);
        // A capped class is reported as its items.
        let mut cap_excluded = Vec::new();
        for &o in &ctx.cap_excluded {
            cap_excluded.extend_from_slice(members(options.class(o) as usize));
        }
        let shortfalls = std::mem::take(&mut ctx.shortfalls);
        Ok(Self::outcome_chosen(
            &chosen,
            effective,
            shortfalls,
            cap_excluded,
        ))
    }

    /// The outcome of a slice over options: `chosen` items with their
    /// variants.
    fn outcome_chosen(
        chosen: &[Chosen],
        effective: SliceBudget,
        shortfalls: Vec<Shortfall>,
        cap_excluded: Vec<u32>,
    ) -> Outcome {
        let mut selected_tokens = 0i64;
        // The shrunk ones by item (an item is chosen once): sorted as
        // (item, position) keys, then built at once.
        let mut keys: Vec<u64> = Vec::new();
        for (k, c) in chosen.iter().enumerate() {
            selected_tokens = selected_tokens.saturating_add(c.tokens);
            if c.variant != 0 {
                keys.push((c.item as u64) << 32 | k as u64);
            }
        }
        keys.sort_unstable();
        let shrunk = ShrunkMap::from_sorted(keys.iter().map(|&key| {
            let c = &chosen[key as u32 as usize];
            let (variant, tokens, cut) = (c.variant, c.tokens, None);
            (
                c.item,
                Shrunk {
                    variant,
                    tokens,
                    cut,
                },
            )
        }));
        Outcome {
            selected: chosen.iter().map(|c| c.item).collect(),
            effective_max: effective.max,
            effective_target: effective.target,
            selected_tokens,
            shortfalls,
            cap_excluded,
            shrunk,
        }
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
            shrunk: ShrunkMap::default(),
        }
    }

    /// The candidates a slicer may see (no negative token count:
    /// supplement 1), in the Sort stage's order where the slicer needs it.
    /// A top-level GreedySlice orders candidates by density and breaks ties
    /// as the Sort stage would from item order too (see
    /// [`crate::slicer::greedy`]), and a grouped list's units are put in Sort
    /// order by `Units::build`, which sorts units, not items: both get item
    /// order and the sort is skipped, as does a QuotaSlice over GreedySlice
    /// (its partitions are ordered by their Sort keys).
    /// A list with variants (`options`) is sliced over the options of the
    /// candidates in Sort order.
    fn sort_stage(&self, items: View<'_>, grouped: bool, options: bool) -> Vec<u32> {
        let allowed = |i: &u32| items.tokens(*i) >= 0;
        let needs_no_order = match &self.slicer {
            // Over options too (`crate::choice::direct`).
            Slicer::Greedy => true,
            // Its partitions' order is found from the Sort keys (see
            // `Quota::slice`), and GreedySlice needs none; over options its
            // classes are read in Sort order.
            Slicer::Quota(q) => matches!(*q.inner, Slicer::Greedy) && !options,
            _ => false,
        };
        if grouped || needs_no_order {
            (0..items.len() as u32).filter(allowed).collect()
        } else {
            let mut sorted = sort_stage(&items);
            sorted.retain(allowed);
            sorted
        }
    }

    /// Sort stage, then Slice stage with `budget` and `pinned_tokens`, on
    /// the pushed scores (`cupel_slice`).
    pub fn slice(&self, all: &Items, budget: &Budget, pinned_tokens: i64) -> Result<Outcome> {
        crate::planted_slowdown(all.len());
        let groups = Groups::of(all);
        let items = all.view();
        let effective = budget.effective(pinned_tokens)?;
        let variants = all.has_variants().then_some(all);
        if groups.is_none() && matches!(self.slicer, Slicer::Greedy) {
            // Density order with Sort-stage ties needs no Sort stage (see
            // `Engine::sort_stage`) nor a candidate list: `greedy_all` and
            // `choice::direct` take the items in item order and pass over
            // negative-token ones.
            if variants.is_some() {
                let chosen = crate::choice::direct::greedy(all, &items, None, effective.target);
                return Ok(Self::outcome_chosen(
                    &chosen,
                    effective,
                    Vec::new(),
                    Vec::new(),
                ));
            }
            let selected = greedy_all(&items, effective.target);
            let ctx = Ctx::new(items, self.memory_limit);
            return Ok(Self::outcome(items, selected, effective, ctx));
        }
        let sorted = self.sort_stage(items, groups.is_some(), variants.is_some());
        self.slice_sorted(items, &sorted, effective, groups.as_ref(), variants)
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
        let variants = items.has_variants().then_some(items);
        let (items, groups) = (items.view(), groups.as_ref());
        let sorted = self.sort_stage(items, groups.is_some(), variants.is_some());
        let full = self
            .slice_sorted(items, &sorted, full_budget, groups, variants)?
            .selected;
        let less = self
            .slice_sorted(items, &sorted, reduced_budget, groups, variants)?
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
                Slicer::Quota(_)
                    | Slicer::CountQuota(_)
                    | Slicer::CountKnapsack(_)
                    | Slicer::Stream(_)
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
        let variants = items.has_variants().then_some(items);
        let (items, groups) = (items.view(), groups.as_ref());
        let sorted = self.sort_stage(items, groups.is_some(), variants.is_some());
        let selected_at = |b: i64| -> Result<bool> {
            let effective = Budget::new(b, b)?.effective(pinned_tokens)?;
            Ok(self
                .slice_sorted(items, &sorted, effective, groups, variants)?
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::NewItem;
    use crate::slicer::greedy;
    use crate::slicer::knapsack::Knapsack;
    use crate::slicer::{Quota, QuotaEntry};
    use crate::sort::counted;

    #[test]
    fn the_shrunk_map_is_a_map_in_item_order() {
        let s = |tokens: i64| Shrunk {
            variant: 1,
            tokens,
            cut: None,
        };
        let mut m: ShrunkMap = [(7, s(1)), (2, s(2)), (7, s(3)), (5, s(4))]
            .into_iter()
            .collect();
        // The later of two entries for item 7 stays.
        let got: Vec<(u32, i64)> = m.iter().map(|(&i, v)| (i, v.tokens)).collect();
        assert_eq!(got, vec![(2, 2), (5, 4), (7, 3)]);
        assert_eq!(m.insert(5, s(9)).map(|v| v.tokens), Some(4));
        assert_eq!(m.insert(3, s(8)), None);
        assert_eq!((m.len(), m[&5].tokens, m[&3].tokens), (4, 9, 8));
        assert!(m.get(&4).is_none() && !m.is_empty());
        assert!(ShrunkMap::default().is_empty());
    }

    /// Items of (tokens, score, group; 0 none).
    fn items(spec: &[(i64, f64, u64)]) -> Items {
        let mut it = Items::new();
        for (i, &(tokens, score, group)) in spec.iter().enumerate() {
            let kind = None;
            it.push(NewItem {
                tokens,
                score,
                kind,
            })
            .unwrap();
            if group != 0 {
                it.set_group(i, group).unwrap();
            }
        }
        it
    }

    /// Every call that slices: `cupel_slice`, GetMarginalItems and
    /// FindMinBudgetFor (item 3 is the target).
    fn every_call(engine: &Engine, it: &Items) {
        let budget = Budget::new(60, 50).unwrap();
        engine.slice(it, &budget, 0).unwrap();
        engine.marginal_items(it, &budget, 0, 15).unwrap();
        engine.find_min_budget(it, 0, 3, 200).unwrap();
    }

    #[test]
    fn greedy_and_grouped_lists_skip_the_sort_stage() {
        let greedy_engine = Engine::new(Slicer::Greedy);
        let knapsack = Engine::new(Slicer::Knapsack(Knapsack::new(1).unwrap()));
        // A zero-token item, then a negative one: GreedySlice never sorts.
        let mut spec = vec![(10, 0.5, 0), (0, 0.9, 0), (20, 0.7, 0), (30, 0.8, 0)];
        counted::take();
        every_call(&greedy_engine, &items(&spec));
        assert_eq!(counted::take(), 0, "GreedySlice, no negative item");
        spec.push((-5, 0.95, 0));
        every_call(&greedy_engine, &items(&spec));
        assert_eq!(counted::take(), 0, "GreedySlice, a negative item");
        // KnapsackSlice needs the Sort stage: once per call.
        every_call(&knapsack, &items(&spec));
        assert_eq!(counted::take(), 3, "KnapsackSlice");
        // A grouped list: Units::build orders the units; no item sort.
        spec[0].2 = 7;
        spec[2].2 = 7;
        for engine in [&greedy_engine, &knapsack] {
            every_call(engine, &items(&spec));
            assert_eq!(counted::take(), 0, "grouped, {:?}", engine.slicer);
        }
    }

    #[test]
    fn quota_over_greedy_skips_the_sort_stage_and_selects_as_in_sort_order() {
        // Kinds whose first appearance differs between item order and Sort
        // order, score ties, zero-token and negative items: the engine's
        // item-order call gives the selection, and its order, of the
        // QuotaSlice over the Sort stage's candidates.
        let kinds = ["Message", "Document", "ToolOutput", "Memory"];
        let spec: Vec<(i64, f64, &str)> = (0..400)
            .map(|i| {
                let tokens = if i % 37 == 5 {
                    -3
                } else {
                    (i * 53) as i64 % 300
                };
                let score = ((i * 71) % 40) as f64 / 40.0;
                (tokens, score, kinds[(i * 13 + i / 7) % 4])
            })
            .collect();
        let it = Items::from_spec(&spec);
        let view = it.view();
        let sorted: Vec<u32> = sort_stage(&view)
            .into_iter()
            .filter(|&i| view.tokens(i) >= 0)
            .collect();
        assert_ne!(
            view.kind(sorted[0]),
            view.kind(0),
            "first appearances differ"
        );
        let entry = |kind: &str, require_percent, cap_percent| QuotaEntry {
            kind: kind.into(),
            require_percent,
            cap_percent,
        };
        let quota = Quota::new(
            Slicer::Greedy,
            vec![entry("Document", 20.0, 50.0), entry("Memory", 10.0, 30.0)],
        )
        .unwrap();
        let engine = Engine::new(Slicer::Quota(quota.clone()));
        for target in [1, 50, 1_000, 9_000, 40_000, 200_000] {
            counted::take();
            let got = engine.slice(&it, &Budget::new(target, target).unwrap(), 0);
            assert_eq!(counted::take(), 0, "target {target}: no Sort stage");
            let mut ctx = Ctx::new(view, usize::MAX);
            let want = quota.slice(
                &sorted,
                SliceBudget {
                    max: target,
                    target,
                },
                &mut ctx,
            );
            assert_eq!(got.unwrap().selected, want.unwrap(), "target {target}");
        }
    }

    #[test]
    fn greedy_in_item_order_selects_as_in_sort_order() {
        // Density ties (0.5/20 = 0.25/10 = 1.0/40 ...), a zero-token item and a
        // negative one: the candidates in item order give the selection and
        // order of the Sort stage's.
        let spec = [
            (20, 0.5, 0),
            (10, 0.25, 0),
            (0, 0.1, 0),
            (-4, 0.9, 0),
            (40, 1.0, 0),
            (10, 0.25, 0),
            (30, 0.75, 0),
        ];
        let it = items(&spec);
        let view = it.view();
        let sorted: Vec<u32> = sort_stage(&view)
            .into_iter()
            .filter(|&i| view.tokens(i) >= 0)
            .collect();
        let engine = Engine::new(Slicer::Greedy);
        for target in [0, 10, 25, 40, 70, 200] {
            let got = engine.slice(&it, &Budget::new(200, target).unwrap(), 0);
            assert_eq!(
                got.unwrap().selected,
                greedy(&view, &sorted, target),
                "{target}"
            );
        }
    }
}
