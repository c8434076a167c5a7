//! Items that shrink instead of vanish: the slicers over variants against
//! brute force on small instances (with groups, with quotas, with count
//! quotas), the guarantees of GreedySlice and the fill step's.
//! tests/variant_free.rs checks that lists without variants slice exactly
//! as before.

mod common;

use common::Rng;
use cupel::items::Truncatable;
use cupel::pipeline::{Engine, Pipeline};
use cupel::text::tokenizer::{Keep, Tokenizer};
use cupel::{Budget, CountEntry, CountQuota, Items, Knapsack, NewItem, Quota, QuotaEntry};
use cupel::{Scarcity, Slicer};

const KINDS: [&str; 3] = ["Message", "Document", "ToolOutput"];

/// A class of the multiple-choice problem: its members, and its options as
/// (tokens, knapsack value, score).
type Class = (Vec<usize>, Vec<(i64, i64, f64)>);

/// One random small list: (tokens, score, kind, group, variants).
#[derive(Debug, Clone)]
struct Spec {
    tokens: i64,
    score: f64,
    kind: usize,
    group: u64,
    /// (tokens, value)
    variants: Vec<(i64, f64)>,
}

fn random_specs(rng: &mut Rng, n: usize, groups: bool) -> Vec<Spec> {
    (0..n)
        .map(|_| {
            let tokens = if rng.chance(8) {
                0
            } else {
                1 + rng.below(60) as i64
            };
            let variants = (0..[0, 0, 1, 1, 2, 3][rng.below(6) as usize])
                .map(|_| {
                    let t = if rng.chance(10) {
                        0
                    } else {
                        rng.below(70) as i64
                    };
                    (t, (1 + rng.below(20)) as f64 / 20.0)
                })
                .collect();
            Spec {
                tokens,
                score: rng.below(101) as f64 / 100.0,
                kind: rng.below(3) as usize,
                group: if groups && rng.chance(35) {
                    1 + rng.below(3)
                } else {
                    0
                },
                variants,
            }
        })
        .collect()
}

fn items_of(specs: &[Spec]) -> Items {
    let mut items = Items::new();
    for (i, s) in specs.iter().enumerate() {
        items
            .push(NewItem {
                tokens: s.tokens,
                score: s.score,
                kind: Some(KINDS[s.kind]),
            })
            .unwrap();
        if s.group != 0 {
            items.set_group(i, s.group).unwrap();
        }
        for &(t, v) in &s.variants {
            items.add_variant(i, t, v, None).unwrap();
        }
    }
    items
}

/// The candidates of the multiple-choice problem, written independently of
/// the library: each ungrouped item, and each group, is a class; option 0
/// is as pushed, option v has every member at its variant v when it has
/// one (a zero-token item never takes a variant). (tokens, value, score)
/// per option, value = the sum of floor(score x share x 10000).
fn classes(specs: &[Spec]) -> Vec<Class> {
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut seen_group = std::collections::HashMap::new();
    for (i, s) in specs.iter().enumerate() {
        if s.group == 0 {
            units.push(vec![i]);
        } else {
            let u = *seen_group.entry(s.group).or_insert_with(|| {
                units.push(Vec::new());
                units.len() - 1
            });
            units[u].push(i);
        }
    }
    units
        .into_iter()
        .map(|members| {
            let most = members
                .iter()
                .filter(|&&m| specs[m].tokens != 0)
                .map(|&m| specs[m].variants.len())
                .max()
                .unwrap_or(0);
            let options = (0..=most)
                .map(|v| {
                    let (mut t, mut value, mut score) = (0, 0, 0.0);
                    for &m in &members {
                        let s = &specs[m];
                        let (mt, share) = match v {
                            0 => (s.tokens, 1.0),
                            _ if s.tokens == 0 || s.variants.len() < v => (s.tokens, 1.0),
                            _ => s.variants[v - 1],
                        };
                        t += mt;
                        value += ((s.score * share * 10000.0) as i64).max(0);
                        score += s.score * share;
                    }
                    (t, value, score)
                })
                .collect();
            (members, options)
        })
        .collect()
}

/// The best total value of at most one option per class within `capacity`
/// buckets of `bucket` tokens (a zero-token item always counts as pushed).
fn brute_force(classes: &[Class], capacity: i64, bucket: i64) -> i64 {
    fn go(cl: &[Class], left: i64, bucket: i64) -> i64 {
        let Some(((_, options), rest)) = cl.split_first() else {
            return 0;
        };
        if options[0].0 == 0 {
            return options[0].1 + go(rest, left, bucket);
        }
        let mut best = go(rest, left, bucket);
        for &(t, v, _) in options {
            let w = if t == 0 { 0 } else { (t - 1) / bucket + 1 };
            if w <= left {
                best = best.max(v + go(rest, left - w, bucket));
            }
        }
        best
    }
    go(classes, capacity, bucket)
}

/// The option each class got in `outcome`, checking that every member of a
/// class is in or out together and takes the class's option.
fn chosen(specs: &[Spec], cls: &[Class], outcome: &cupel::Outcome) -> Vec<Option<usize>> {
    let mut variant = vec![None; specs.len()];
    for &i in &outcome.selected {
        assert!(variant[i as usize].is_none(), "item {i} selected twice");
        let v = outcome.shrunk.get(&i).map_or(0, |s| s.variant as usize);
        variant[i as usize] = Some(v);
    }
    cls.iter()
        .map(|(members, options)| {
            let vs: Vec<Option<usize>> = members.iter().map(|&m| variant[m]).collect();
            assert!(
                vs.iter().all(|v| v.is_some() == vs[0].is_some()),
                "a group split: {vs:?}"
            );
            vs[0]?;
            // The class option: the largest member variant (members
            // without that variant stay at 0).
            let v = vs.iter().map(|v| v.unwrap()).max().unwrap();
            for (&m, got) in members.iter().zip(&vs) {
                let own = if specs[m].tokens != 0 && specs[m].variants.len() >= v {
                    v
                } else {
                    0
                };
                assert_eq!(got.unwrap(), own, "member {m} of option {v}");
            }
            assert!(v < options.len());
            Some(v)
        })
        .collect()
}

fn slice(specs: &[Spec], slicer: Slicer, target: i64) -> cupel::Outcome {
    let items = items_of(specs);
    let budget = Budget::new(target.max(1) * 2, target).unwrap();
    Engine::new(slicer).slice(&items, &budget, 0).unwrap()
}

#[test]
fn knapsack_is_optimal_for_the_multiple_choice_problem() {
    let mut rng = Rng(0x5EED_0027);
    for case in 0..1500 {
        let n = 1 + rng.below(7) as usize;
        let specs = random_specs(&mut rng, n, case % 2 == 1);
        let bucket = [1, 1, 1, 7, 20][rng.below(5) as usize];
        let target = rng.below(150) as i64;
        let outcome = slice(
            &specs,
            Slicer::Knapsack(Knapsack::new(bucket).unwrap()),
            target,
        );
        let cls = classes(&specs);
        let got = chosen(&specs, &cls, &outcome);
        let (mut value, mut weight, mut tokens) = (0, 0, 0);
        for ((_, options), v) in cls.iter().zip(&got) {
            if let Some(v) = *v {
                let (t, val, _) = options[v];
                value += val;
                tokens += t;
                weight += if t == 0 { 0 } else { (t - 1) / bucket + 1 };
            }
        }
        let capacity = target / bucket;
        assert!(weight <= capacity.max(0), "case {case}: over the capacity");
        assert_eq!(outcome.selected_tokens, tokens, "case {case}");
        if target > 0 {
            let best = brute_force(&cls, capacity, bucket);
            assert_eq!(
                value, best,
                "case {case}: {specs:?} target {target} bucket {bucket}"
            );
        } else {
            assert!(outcome.selected.is_empty());
        }
    }
}

/// GreedySlice's contract: within the budget, at most one option per class;
/// no option of an unselected class fits in what is left; no selected class
/// has an option of strictly higher score whose extra tokens fit.
#[test]
fn greedy_meets_its_guarantees() {
    let mut rng = Rng(0x5EED_0028);
    for case in 0..3000 {
        let n = 1 + rng.below(12) as usize;
        let specs = random_specs(&mut rng, n, case % 2 == 1);
        let target = 1 + rng.below(200) as i64;
        let outcome = slice(&specs, Slicer::Greedy, target);
        let cls = classes(&specs);
        let got = chosen(&specs, &cls, &outcome);
        let used: i64 = cls
            .iter()
            .zip(&got)
            .filter_map(|((_, o), v)| v.map(|v| o[v].0))
            .sum();
        assert!(used <= target, "case {case}: {used} > {target}");
        assert_eq!(outcome.selected_tokens, used);
        let left = target - used;
        for ((members, options), v) in cls.iter().zip(&got) {
            match v {
                None => assert!(
                    options.iter().all(|o| o.0 > left),
                    "case {case}: class {members:?} unselected but fits {left}: {specs:?}"
                ),
                Some(v) => {
                    let (t, _, s) = options[*v];
                    assert!(
                        !options.iter().any(|o| o.2 > s && o.0 - t <= left),
                        "case {case}: class {members:?} at option {v} could move up: {specs:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn quota_over_knapsack_is_optimal_per_kind() {
    // Every kind has require = cap: its budget is floor(percent x target).
    let mut rng = Rng(0x5EED_0029);
    for case in 0..600 {
        let n = 1 + rng.below(8) as usize;
        let specs = random_specs(&mut rng, n, false);
        let target = 10 + rng.below(200) as i64;
        let cut = 10 + rng.below(40) as i64;
        let percents = [cut as f64, 30.0, (70 - cut) as f64];
        let entries = KINDS
            .iter()
            .zip(percents)
            .map(|(k, p)| QuotaEntry {
                kind: k.to_string(),
                require_percent: p,
                cap_percent: p,
            })
            .collect();
        let knapsack = Slicer::Knapsack(Knapsack::new(1).unwrap());
        let quota = Slicer::Quota(Quota::new(knapsack, entries).unwrap());
        let outcome = slice(&specs, quota, target);
        let cls = classes(&specs);
        let got = chosen(&specs, &cls, &outcome);
        for (k, p) in percents.iter().enumerate() {
            let budget = (p / 100.0 * target as f64).floor() as i64;
            let of_kind: Vec<_> = cls
                .iter()
                .zip(&got)
                .filter(|((m, _), _)| specs[m[0]].kind == k)
                .collect();
            let value: i64 = of_kind
                .iter()
                .filter_map(|((_, o), v)| v.map(|v| o[v].1))
                .sum();
            let tokens: i64 = of_kind
                .iter()
                .filter_map(|((_, o), v)| v.map(|v| o[v].0))
                .sum();
            let kind_classes: Vec<_> = of_kind.iter().map(|(c, _)| (*c).clone()).collect();
            assert!(tokens <= budget.max(0), "case {case} kind {k}");
            if budget > 0 {
                let best = brute_force(&kind_classes, budget, 1);
                assert_eq!(
                    value, best,
                    "case {case} kind {k}: {specs:?} target {target}"
                );
            }
        }
    }
}

#[test]
fn count_quota_counts_one_item_per_chosen_option() {
    let mut rng = Rng(0x5EED_002A);
    for case in 0..1500 {
        let n = 1 + rng.below(10) as usize;
        let specs = random_specs(&mut rng, n, false);
        let target = 1 + rng.below(200) as i64;
        let (require, cap) = (rng.below(2) as u32, 1 + rng.below(3) as u32);
        let entries = vec![CountEntry {
            kind: "ToolOutput".into(),
            require: require.min(cap),
            cap,
        }];
        let inner = if rng.chance(50) {
            Slicer::CountQuota(CountQuota::new(Slicer::Greedy, entries, Scarcity::Degrade).unwrap())
        } else {
            Slicer::CountKnapsack(CountQuota::knapsack(1, entries, Scarcity::Degrade).unwrap())
        };
        let outcome = slice(&specs, inner, target);
        let cls = classes(&specs);
        let got = chosen(&specs, &cls, &outcome);
        let tools = cls
            .iter()
            .zip(&got)
            .filter(|((m, _), v)| specs[m[0]].kind == 2 && v.is_some())
            .count();
        assert!(tools as u32 <= cap, "case {case}: {tools} > cap {cap}");
        let tokens: i64 = cls
            .iter()
            .zip(&got)
            .filter_map(|((_, o), v)| v.map(|v| o[v].0))
            .sum();
        assert_eq!(outcome.selected_tokens, tokens, "case {case}");
    }
}

/// The fill step: after a run, no truncatable candidate left out could
/// still be cut to at least its `min_tokens` in what is left; every cut
/// item's kept text counts what the report says; the total stays within
/// the effective target.
#[test]
fn fill_leaves_no_truncatable_item_that_would_still_fit() {
    let tokenizer = Tokenizer::builtin("o200k_base").unwrap();
    let words = ["alpha ", "beta ", "gamma\n", "delta, ", "épsilon ", "日本 "];
    let mut rng = Rng(0x5EED_002B);
    for case in 0..300 {
        let n = 1 + rng.below(8) as usize;
        let mut items = Items::new();
        let mut texts = Vec::new();
        for i in 0..n {
            let text: String = (0..1 + rng.below(60))
                .map(|_| words[rng.below(words.len() as u64) as usize])
                .collect();
            let tokens = tokenizer.count(&text) as i64;
            let score = rng.below(100) as f64 / 100.0;
            items
                .push(NewItem {
                    tokens,
                    score,
                    kind: None,
                })
                .unwrap();
            items.set_content(i, &text).unwrap();
            if rng.chance(60) {
                let keep = [Keep::Head, Keep::Tail, Keep::BothEnds][rng.below(3) as usize];
                let min_tokens = rng.below(12) as i64;
                items
                    .set_truncatable(i, Some(Truncatable { keep, min_tokens }))
                    .unwrap();
            }
            if rng.chance(20) {
                items
                    .add_variant(i, rng.below(5) as i64, 0.5, Some("[gone]"))
                    .unwrap();
            }
            texts.push(text);
        }
        let target = 1 + rng.below(150) as i64;
        let slicer = match rng.below(3) {
            0 => Slicer::Greedy,
            1 => Slicer::Knapsack(Knapsack::new(1).unwrap()),
            _ => Slicer::Knapsack(Knapsack::new(10).unwrap()),
        };
        let mut pipeline = Pipeline::new(None, Engine::new(slicer), None);
        pipeline.deduplication = false;
        pipeline.tokenizer = Some(tokenizer.clone());
        let budget = Budget::new(target, target).unwrap();
        let mut report = cupel::pipeline::Report::default();
        pipeline.run(&items, &budget, Some(&mut report)).unwrap();
        let added: i64 = report.included.iter().map(|d| d.added_tokens).sum();
        assert!(added <= target, "case {case}: {added} > {target}");
        assert_eq!(report.outcome.selected_tokens, added, "case {case}");
        let left = target - added;
        for d in &report.included {
            if let Some((head, tail)) = d.cut {
                let t = &texts[d.item as usize];
                let kept = tokenizer.count(&t[..head]) + tokenizer.count(&t[tail..]);
                assert_eq!(kept as i64, d.added_tokens, "case {case}");
                let min = items.truncatable(d.item).unwrap().min_tokens;
                assert!(d.added_tokens >= min, "case {case}");
                assert_eq!(d.variant, 0);
            }
        }
        for d in &report.excluded {
            let Some(t) = items.truncatable(d.item) else {
                continue;
            };
            if left >= t.min_tokens {
                let cut = tokenizer.truncate(&texts[d.item as usize], left as usize, t.keep);
                assert!(
                    (cut.tokens as i64) < t.min_tokens,
                    "case {case}: item {} left out, but {} of its tokens fit in {left}",
                    d.item,
                    cut.tokens
                );
            }
        }
    }
}

/// GreedySlice over options as docs/variants.md words it, written here
/// from those words: each item's options as steps up its hull from
/// nothing, all steps by efficiency (ties: the Sort stage's order, then
/// the step), then the two repairs. Ungrouped items; the selection as
/// (item, variant) in the order the items were first chosen.
fn reference_greedy(specs: &[Spec], target: i64) -> Vec<(usize, usize)> {
    if target <= 0 {
        return Vec::new();
    }
    // The Sort stage: score descending, then push order.
    let mut order: Vec<usize> = (0..specs.len()).collect();
    order.sort_by(|&a, &b| {
        specs[b]
            .score
            .partial_cmp(&specs[a].score)
            .unwrap()
            .then(a.cmp(&b))
    });
    let options = |i: usize| -> Vec<(i64, f64)> {
        let s = &specs[i];
        let mut o = vec![(s.tokens, s.score)];
        if s.tokens != 0 {
            o.extend(s.variants.iter().map(|&(t, v)| (t, s.score * v)));
        }
        o
    };
    // (efficiency, class position, level, option, extra)
    let mut steps: Vec<(f64, usize, usize, usize, i64)> = Vec::new();
    for (c, &i) in order.iter().enumerate() {
        let o = options(i);
        let (mut t0, mut s0, mut level) = (0i64, 0f64, 0);
        loop {
            let mut best: Option<(f64, i64, usize)> = None;
            for (k, &(t, s)) in o.iter().enumerate() {
                if t > target || s <= s0 || t < t0 {
                    continue;
                }
                let dt = t - t0;
                let eff = if dt == 0 {
                    f64::MAX
                } else {
                    (s - s0) / dt as f64
                };
                if best.is_none_or(|(e, bdt, _)| eff > e || (eff == e && dt < bdt)) {
                    best = Some((eff, dt, k));
                }
            }
            let Some((eff, dt, k)) = best else { break };
            steps.push((eff, c, level, k, dt));
            (t0, s0, level) = (o[k].0, o[k].1, level + 1);
        }
    }
    steps.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap()
            .then(a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
    });
    let n = order.len();
    let (mut at, mut level, mut dead) = (vec![None; n], vec![0; n], vec![false; n]);
    let mut chosen_order = Vec::new();
    let mut left = target;
    for &(_, c, l, k, extra) in &steps {
        if dead[c] || level[c] != l {
            continue;
        }
        if extra > left {
            dead[c] = true;
            continue;
        }
        if at[c].is_none() {
            chosen_order.push(c);
        }
        at[c] = Some(k);
        level[c] += 1;
        left -= extra;
    }
    // Higher score, then fewer tokens, then the earlier option.
    let pick = |o: &[(i64, f64)], ok: &dyn Fn(usize) -> bool| -> Option<usize> {
        (0..o.len()).filter(|&k| ok(k)).min_by(|&p, &q| {
            o[q].1
                .partial_cmp(&o[p].1)
                .unwrap()
                .then(o[p].0.cmp(&o[q].0))
                .then(p.cmp(&q))
        })
    };
    loop {
        let mut changed = false;
        for c in 0..n {
            if at[c].is_some() {
                continue;
            }
            let o = options(order[c]);
            if let Some(k) = pick(&o, &|k| o[k].0 <= left) {
                at[c] = Some(k);
                chosen_order.push(c);
                left -= o[k].0;
                changed = true;
            }
        }
        for &c in &chosen_order.clone() {
            let o = options(order[c]);
            let cur = at[c].unwrap();
            if let Some(k) = pick(&o, &|k| o[k].1 > o[cur].1 && o[k].0 - o[cur].0 <= left) {
                left -= o[k].0 - o[cur].0;
                at[c] = Some(k);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    chosen_order
        .into_iter()
        .map(|c| (order[c], at[c].unwrap()))
        .collect()
}

/// The selection of `outcome` as (item, variant), in its order.
fn selection(outcome: &cupel::Outcome) -> Vec<(usize, usize)> {
    let variant = |i: u32| outcome.shrunk.get(&i).map_or(0, |s| s.variant as usize);
    outcome
        .selected
        .iter()
        .map(|&i| (i as usize, variant(i)))
        .collect()
}

#[test]
fn greedy_is_the_hull_greedy_as_documented() {
    let mut rng = Rng(0x5EED_002C);
    for case in 0..4000 {
        let n = 1 + rng.below(10) as usize;
        let specs = random_specs(&mut rng, n, false);
        let target = rng.below(220) as i64 - 10;
        let budget_target = target.max(0);
        let items = items_of(&specs);
        let budget = Budget::new(budget_target.max(1), budget_target).unwrap();
        let outcome = Engine::new(Slicer::Greedy)
            .slice(&items, &budget, 0)
            .unwrap();
        let got = selection(&outcome);
        assert_eq!(
            got,
            reference_greedy(&specs, budget_target),
            "case {case}: {specs:?} target {budget_target}"
        );
    }
}

/// The same at sizes where GreedySlice splits its input at an efficiency
/// estimated from a sample (`choice::direct`): thousands of items of up to
/// 2,000 tokens (so the pass above the split leaves room below it), budgets
/// from a few tokens to a tenth of them.
#[test]
fn greedy_is_the_hull_greedy_on_inputs_it_splits() {
    let mut rng = Rng(0x5EED_0B16);
    for case in 0..24 {
        let n = 2048 + rng.below(12_000) as usize;
        let specs: Vec<Spec> = (0..n)
            .map(|_| {
                let tokens = rng.below(2000) as i64;
                let variants = (0..rng.below(4))
                    .map(|_| {
                        let t = rng.below(tokens as u64 + 20) as i64;
                        (t, (1 + rng.below(20)) as f64 / 20.0)
                    })
                    .collect();
                Spec {
                    tokens,
                    score: rng.below(101) as f64 / 100.0,
                    kind: 0,
                    group: 0,
                    variants,
                }
            })
            .collect();
        let total: i64 = specs.iter().map(|s| s.tokens).sum();
        let target = 1 + rng.below(1 + total as u64 / 10) as i64;
        let items = items_of(&specs);
        let budget = Budget::new(target, target).unwrap();
        let outcome = Engine::new(Slicer::Greedy)
            .slice(&items, &budget, 0)
            .unwrap();
        let got = selection(&outcome);
        let want = reference_greedy(&specs, target);
        assert_eq!(got, want, "case {case}: n {n} target {target}");
    }
}

/// A group whose large member has a placeholder goes in as its option 1
/// through the whole pipeline: placed together, the report's tokens those
/// of the option, no overflow on the way (Place counts what each adds).
#[test]
fn a_group_goes_in_at_its_variant_through_the_pipeline() {
    let mut items = Items::new();
    for (tokens, score) in [(20, 0.9), (5000, 0.8), (30, 0.5), (40, 0.4)] {
        items
            .push(NewItem {
                tokens,
                score,
                kind: None,
            })
            .unwrap();
    }
    items.set_group(0, 3).unwrap(); // a tool call ...
    items.set_group(1, 3).unwrap(); // ... and its output
    items
        .add_variant(1, 10, 0.1, Some("[output cleared]"))
        .unwrap();
    for slicer in [Slicer::Greedy, Slicer::Knapsack(Knapsack::new(1).unwrap())] {
        let mut p = Pipeline::new(None, Engine::new(slicer), None);
        p.deduplication = false;
        let mut report = cupel::pipeline::Report::default();
        let placed = p
            .run(&items, &Budget::new(100, 60).unwrap(), Some(&mut report))
            .unwrap();
        // The group (20 + 10 tokens) and item 2 (30): 60; item 3 is out.
        let mut sorted = placed.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2], "{:?}", p.engine.slicer);
        let at = |i: u32| report.included.iter().find(|d| d.item == i).unwrap();
        assert_eq!(
            (at(0).variant, at(0).added_tokens, at(0).reason.name()),
            (0, 20, "Scored")
        );
        assert_eq!(
            (at(1).variant, at(1).added_tokens, at(1).reason.name()),
            (1, 10, "Variant")
        );
        assert_eq!((at(1).item_tokens, at(1).group_tokens), (5000, 5020));
        assert_eq!(report.outcome.selected_tokens, 60);
        assert!((at(1).score - 0.08).abs() < 1e-12);
        let pos = |i: u32| placed.iter().position(|&x| x == i).unwrap();
        assert_eq!(pos(1), pos(0) + 1, "the group stays together");
        assert_eq!(report.excluded.len(), 1);
    }
}
