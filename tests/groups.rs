//! Keep-together groups (docs/groups.md), through the C ABI, on thousands
//! of seeded lists with random groups (sizes 1-6, mixed kinds, pinned,
//! zero-token and negative-token members):
//!
//! - every slicer and nesting of decorators in `cupel_slice`, the marginal
//!   and min-budget calls, the stream and the whole pipeline select a group
//!   whole or not at all, place its members next to each other in push
//!   order, hold the budget, and give the same result twice;
//! - GreedySlice equals a plain reference of the grouped rule;
//! - KnapsackSlice reaches the brute-force optimum of the grouped problem
//!   and equals the spec's DP run on the group rows (its tie-breaking);
//! - a list of one-member groups gives exactly the ungrouped result.

mod common;

#[path = "../fuzz/src/pipeline_ref.rs"]
mod pipeline_ref;

#[path = "common/cases.rs"]
mod cases;

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::ptr;

use common::Rng;
use cupel::ffi::*;
use pipeline_ref::{our_slicer, ours_raw, Case, SlicerSpec};

fn ok(s: cupel_status) {
    assert_eq!(s, CUPEL_OK, "{:?}", unsafe {
        CStr::from_ptr(cupel_last_error())
    });
}

fn last_error() -> String {
    // SAFETY: cupel_last_error always returns a valid string.
    unsafe { CStr::from_ptr(cupel_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Random groups over `n` items: about a third ungrouped, the rest in
/// groups of 1-6 members scattered over the list.
fn random_groups(rng: &mut Rng, n: usize) -> Vec<u64> {
    let mut groups = vec![0u64; n];
    let mut free: Vec<usize> = (0..n).filter(|_| !rng.chance(33)).collect();
    while !free.is_empty() {
        let size = (1 + rng.below(6) as usize).min(free.len());
        // Any non-zero id; the high bits make sure ids are not small numbers.
        let id = (rng.below(u32::MAX as u64) + 1) << rng.below(32);
        for _ in 0..size {
            let k = rng.below(free.len() as u64) as usize;
            groups[free.swap_remove(k)] = id;
        }
    }
    groups
}

/// Members of each group (push order), by id.
fn members(groups: &[u64]) -> HashMap<u64, Vec<usize>> {
    let mut m: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, &g) in groups.iter().enumerate() {
        if g != 0 {
            m.entry(g).or_default().push(i);
        }
    }
    m
}

/// All or nothing, and (when `placed`) each group's members consecutive in
/// push order. `Err` says which group broke which rule.
fn check_groups(out: &[usize], groups: &[u64], placed: bool) -> Result<(), String> {
    let mut at = vec![usize::MAX; groups.len()];
    for (p, &i) in out.iter().enumerate() {
        if at[i] != usize::MAX {
            return Err(format!("item {i} is in the output twice"));
        }
        at[i] = p;
    }
    for (g, m) in members(groups) {
        let chosen = m.iter().filter(|&&i| at[i] != usize::MAX).count();
        if chosen != 0 && chosen != m.len() {
            return Err(format!("group {g} {m:?} is split: {chosen} chosen"));
        }
        if placed && chosen != 0 {
            let first = at[m[0]];
            for (k, &i) in m.iter().enumerate() {
                if at[i] != first + k {
                    return Err(format!(
                        "group {g} {m:?} is not placed together in push order: {out:?}"
                    ));
                }
            }
        }
    }
    Ok(())
}

// ---- cupel_slice ------------------------------------------------------

struct List {
    tokens: Vec<i64>,
    scores: Vec<f64>,
    kinds: Vec<&'static str>,
    groups: Vec<u64>,
}

const KINDS: [&str; 3] = ["ToolCall", "ToolOutput", "Message"];

fn random_list(rng: &mut Rng, max_n: u64) -> List {
    let n = rng.below(max_n + 1) as usize;
    let mut l = List {
        tokens: vec![],
        scores: vec![],
        kinds: vec![],
        groups: vec![],
    };
    for _ in 0..n {
        l.tokens.push(match rng.below(12) {
            0 => 0,
            1 => -(1 + rng.below(20) as i64),
            _ => 1 + rng.below(300) as i64,
        });
        l.scores.push(rng.below(21) as f64 / 20.0 - 0.1);
        l.kinds.push(KINDS[rng.below(3) as usize]);
    }
    l.groups = random_groups(rng, n);
    l
}

/// The list as a `cupel_items` (groups set with the bulk call).
unsafe fn push(l: &List) -> *mut cupel_items {
    let mut items = ptr::null_mut();
    ok(cupel_items_new(&mut items));
    for i in 0..l.tokens.len() {
        let kind = CString::new(l.kinds[i]).unwrap();
        ok(cupel_items_push(
            items,
            l.tokens[i],
            l.scores[i],
            kind.as_ptr(),
        ));
    }
    ok(cupel_items_set_groups(
        items,
        0,
        l.groups.len(),
        l.groups.as_ptr(),
    ));
    items
}

unsafe fn slice(
    slicer: *const cupel_slicer,
    items: *const cupel_items,
    target: i64,
    pinned: i64,
) -> Vec<usize> {
    let mut budget = ptr::null_mut();
    ok(cupel_budget_new(target.max(pinned), target, &mut budget));
    let mut out = vec![0usize; cupel_items_len(items)];
    let mut n = 0;
    ok(cupel_slice(
        slicer,
        items,
        budget,
        pinned,
        out.as_mut_ptr(),
        out.len(),
        &mut n,
        ptr::null_mut(),
    ));
    cupel_budget_free(budget);
    out.truncate(n);
    out
}

fn counts(rng: &mut Rng) -> Vec<(String, u32, u32)> {
    let mut e = Vec::new();
    for k in KINDS {
        if rng.chance(60) {
            let req = rng.below(3) as u32;
            e.push((k.to_string(), req, req + rng.below(3) as u32));
        }
    }
    e
}

/// Every slicer, and decorators nested two deep, as `(name, handle, counts)`
/// (`counts`: a count slicer is inside, so the budget may be exceeded by
/// its Phase 1).
unsafe fn slicers(rng: &mut Rng) -> Vec<(&'static str, *mut cupel_slicer, bool)> {
    let bucket = [1, 7, 100][rng.below(3) as usize];
    let quota = vec![
        ("ToolCall".to_string(), 10.0, 60.0),
        ("Message".to_string(), 0.0, 80.0),
    ];
    let mut v = vec![
        ("greedy", our_slicer(&SlicerSpec::Greedy), false),
        ("knapsack", our_slicer(&SlicerSpec::Knapsack(bucket)), false),
        (
            "quota(greedy)",
            our_slicer(&SlicerSpec::Quota(quota.clone())),
            false,
        ),
        (
            "count_quota(greedy)",
            our_slicer(&SlicerSpec::CountQuota(counts(rng))),
            true,
        ),
        (
            "count_knapsack",
            our_slicer(&SlicerSpec::CountKnapsack(bucket, counts(rng))),
            true,
        ),
    ];
    // Nestings: quota(knapsack), quota(count_quota(greedy)),
    // count_quota(quota(knapsack)).
    let names: Vec<CString> = quota
        .iter()
        .map(|q| CString::new(q.0.as_str()).unwrap())
        .collect();
    let quotas: Vec<cupel_quota> = quota
        .iter()
        .zip(&names)
        .map(|(q, k)| cupel_quota {
            kind: k.as_ptr(),
            require_percent: q.1,
            cap_percent: q.2,
        })
        .collect();
    let wrap_quota = |inner: *mut cupel_slicer| {
        let mut out = ptr::null_mut();
        ok(cupel_slicer_new_quota(
            inner,
            quotas.as_ptr(),
            quotas.len(),
            &mut out,
        ));
        cupel_slicer_free(inner);
        out
    };
    let c = counts(rng);
    let cnames: Vec<CString> = c
        .iter()
        .map(|e| CString::new(e.0.as_str()).unwrap())
        .collect();
    let entries: Vec<cupel_count_quota> = c
        .iter()
        .zip(&cnames)
        .map(|(e, k)| cupel_count_quota {
            kind: k.as_ptr(),
            require_count: e.1,
            cap_count: e.2,
        })
        .collect();
    let wrap_count = |inner: *mut cupel_slicer| {
        let mut out = ptr::null_mut();
        ok(cupel_slicer_new_count_quota(
            inner,
            entries.as_ptr(),
            entries.len(),
            CUPEL_SCARCITY_DEGRADE as i32,
            &mut out,
        ));
        cupel_slicer_free(inner);
        out
    };
    v.push((
        "quota(knapsack)",
        wrap_quota(our_slicer(&SlicerSpec::Knapsack(bucket))),
        false,
    ));
    v.push((
        "quota(count_quota(greedy))",
        wrap_quota(wrap_count(our_slicer(&SlicerSpec::Greedy))),
        true,
    ));
    v.push((
        "count_quota(quota(knapsack))",
        wrap_count(wrap_quota(our_slicer(&SlicerSpec::Knapsack(bucket)))),
        true,
    ));
    v
}

#[test]
fn every_slicer_keeps_groups_whole() {
    let mut rng = Rng(0x6A0F_1157_0000_0001);
    let mut grouped_selected = 0u64;
    for case in 0..1500 {
        let l = random_list(&mut rng, 40);
        let target = rng.below(1500) as i64;
        let pinned = if rng.chance(20) {
            rng.below(200) as i64
        } else {
            0
        };
        // SAFETY: every handle is made here and freed once.
        unsafe {
            let items = push(&l);
            for (name, slicer, has_counts) in slicers(&mut rng) {
                let out = slice(slicer, items, target, pinned);
                let again = slice(slicer, items, target, pinned);
                assert_eq!(out, again, "case {case} {name}: not deterministic");
                // The slicer's output: groups whole and in push order (a
                // unit's members are emitted together).
                if let Err(e) = check_groups(&out, &l.groups, true) {
                    panic!("case {case} {name}: {e}");
                }
                let used: i64 = out.iter().map(|&i| l.tokens[i]).sum();
                assert!(out.iter().all(|&i| l.tokens[i] >= 0), "case {case} {name}");
                let g = members(&l.groups);
                for m in g.values() {
                    if out.contains(&m[0]) {
                        grouped_selected += 1;
                        // A group with a negative member is never selected.
                        assert!(m.iter().all(|&i| l.tokens[i] >= 0), "case {case} {name}");
                    }
                }
                if !has_counts {
                    assert!(
                        used <= (target - pinned).max(0),
                        "case {case} {name}: {used} tokens over {target} - {pinned}"
                    );
                }
                cupel_slicer_free(slicer);
            }
            cupel_items_free(items);
        }
    }
    assert!(grouped_selected > 10_000, "{grouped_selected}");
}

#[test]
fn marginal_and_min_budget_keep_groups_whole() {
    let mut rng = Rng(0x6A0F_1157_0000_0002);
    let mut found = 0;
    for case in 0..800 {
        let l = random_list(&mut rng, 30);
        let target = 50 + rng.below(1200) as i64;
        let slack = rng.below(target as u64 / 2 + 1) as i64;
        // SAFETY: every handle is made here and freed once.
        unsafe {
            let items = push(&l);
            for spec in [
                SlicerSpec::Greedy,
                SlicerSpec::Knapsack(1 + rng.below(20) as i64),
            ] {
                let slicer = our_slicer(&spec);
                let mut budget = ptr::null_mut();
                ok(cupel_budget_new(target, target, &mut budget));
                let mut out = vec![0usize; l.tokens.len()];
                let mut n = 0;
                ok(cupel_marginal_items(
                    slicer,
                    items,
                    budget,
                    0,
                    slack,
                    out.as_mut_ptr(),
                    out.len(),
                    &mut n,
                ));
                if let Err(e) = check_groups(&out[..n], &l.groups, false) {
                    panic!("case {case} {spec:?} marginal: {e}");
                }
                // The smallest budget that selects an item selects its group.
                if !l.tokens.is_empty() {
                    let target_index = rng.below(l.tokens.len() as u64) as usize;
                    let mut b = 0;
                    let status =
                        cupel_find_min_budget(slicer, items, 0, target_index, 4000, &mut b);
                    if l.tokens[target_index] < 0 {
                        assert_eq!((status, b), (CUPEL_OK, -1));
                    } else if status == CUPEL_OK && b >= 0 {
                        found += 1;
                        let chosen = slice(slicer, items, b, 0);
                        assert!(chosen.contains(&target_index), "case {case} {spec:?}");
                        if let Some(&g) = l.groups.get(target_index).filter(|&&g| g != 0) {
                            let m = &members(&l.groups)[&g];
                            let sum: i64 = m.iter().map(|&i| l.tokens[i]).sum();
                            assert!(b >= sum, "case {case}: budget {b} < group tokens {sum}");
                        }
                    }
                }
                cupel_budget_free(budget);
                cupel_slicer_free(slicer);
            }
            cupel_items_free(items);
        }
    }
    assert!(found > 300, "{found}");
}

// ---- GreedySlice against a plain reference of the grouped rule ----------

/// The Sort stage's order of the non-negative-group candidates, as units
/// (member lists in push order) ordered by their first member in it.
fn units(l: &List) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..l.tokens.len()).collect();
    order.sort_by(|&a, &b| {
        l.scores[b]
            .partial_cmp(&l.scores[a])
            .unwrap()
            .then(a.cmp(&b))
    });
    let m = members(&l.groups);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for i in order {
        let unit = match l.groups[i] {
            0 => vec![i],
            g if seen.insert(g) => m[&g].clone(),
            _ => continue,
        };
        if unit.iter().all(|&k| l.tokens[k] >= 0) {
            out.push(unit);
        }
    }
    out
}

fn greedy_reference(l: &List, target: i64) -> Vec<usize> {
    let mut u: Vec<(f64, i64, Vec<usize>)> = units(l)
        .into_iter()
        .map(|m| {
            let t: i64 = m.iter().map(|&i| l.tokens[i]).sum();
            let s = m.iter().fold(0.0, |a, &i| a + l.scores[i]);
            let density = if t == 0 { f64::INFINITY } else { s / t as f64 };
            (density, t, m)
        })
        .collect();
    // Stable: equal densities keep the units' order.
    u.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    let mut left = target;
    let mut out = Vec::new();
    if target <= 0 {
        return out;
    }
    for (_, t, m) in u {
        if t <= left {
            left -= t;
            out.extend(m);
        }
    }
    out
}

#[test]
fn greedy_matches_the_grouped_rule() {
    let mut rng = Rng(0x6A0F_1157_0000_0003);
    for case in 0..3000 {
        let l = random_list(&mut rng, if case % 10 == 0 { 3000 } else { 40 });
        let target = rng.below(if l.tokens.len() > 100 { 100_000 } else { 1500 }) as i64;
        // SAFETY: every handle is made here and freed once.
        unsafe {
            let items = push(&l);
            let slicer = our_slicer(&SlicerSpec::Greedy);
            let got = slice(slicer, items, target, 0);
            assert_eq!(got, greedy_reference(&l, target), "case {case}");
            cupel_slicer_free(slicer);
            cupel_items_free(items);
        }
    }
}

// ---- KnapsackSlice: the grouped problem's optimum --------------------

fn value(score: f64) -> i64 {
    ((score * 10000.0) as i64).max(0)
}

#[test]
fn knapsack_is_the_optimum_of_the_grouped_problem() {
    let mut rng = Rng(0x6A0F_1157_0000_0004);
    let mut nontrivial = 0;
    for case in 0..2000 {
        let l = random_list(&mut rng, 24);
        let u = units(&l);
        if u.len() > 16 {
            continue;
        }
        let bucket = [1, 3, 10, 100][rng.below(4) as usize];
        let target = rng.below(900) as i64;
        let tokens: Vec<i64> = u
            .iter()
            .map(|m| m.iter().map(|&i| l.tokens[i]).sum())
            .collect();
        let values: Vec<i64> = u
            .iter()
            .map(|m| m.iter().map(|&i| value(l.scores[i])).sum())
            .collect();
        // SAFETY: every handle is made here and freed once.
        let got = unsafe {
            let items = push(&l);
            let slicer = our_slicer(&SlicerSpec::Knapsack(bucket));
            let got = slice(slicer, items, target, 0);
            cupel_slicer_free(slicer);
            cupel_items_free(items);
            got
        };
        // Brute force over every subset of the units.
        let capacity = target / bucket;
        let weight = |t: i64| if t == 0 { 0 } else { (t - 1) / bucket + 1 };
        let mut best = 0;
        for mask in 0u32..1 << u.len() {
            let (mut w, mut v) = (0, 0);
            for k in 0..u.len() {
                if mask >> k & 1 == 1 {
                    w += weight(tokens[k]);
                    v += values[k];
                }
            }
            if w <= capacity {
                best = best.max(v);
            }
        }
        let got_value: i64 = u
            .iter()
            .enumerate()
            .filter(|(_, m)| got.contains(&m[0]))
            .map(|(k, _)| values[k])
            .sum();
        if target > 0 {
            assert_eq!(got_value, best, "case {case}: not the optimum");
        }
        if best > 0 {
            nontrivial += 1;
        }
        // Tie-breaking: exactly the spec's DP (strict improvement, rows in
        // unit order, reconstruction from the last row) over the units.
        let cands: Vec<u32> = (0..u.len() as u32).collect();
        let want: Vec<usize> = cupel::slicer::knapsack::reference::knapsack_values(
            &tokens, &values, &cands, target, bucket,
        )
        .into_iter()
        .flat_map(|k| u[k as usize].clone())
        .collect();
        assert_eq!(got, want, "case {case}: not the spec DP's order or ties");
    }
    assert!(nontrivial > 1000, "{nontrivial}");
}

// ---- the stream ---------------------------------------------------------

#[test]
fn the_stream_keeps_groups_whole() {
    let mut rng = Rng(0x6A0F_1157_0000_0005);
    for case in 0..1500 {
        let target = rng.below(2000) as i64 - 100;
        let batch = rng.below(6) as usize;
        // Runs of one group pushed one after another; ids never reused.
        let (mut tokens, mut groups) = (Vec::new(), Vec::new());
        let mut next_id = 1u64;
        while tokens.len() < rng.below(80) as usize {
            let (size, id) = match rng.chance(50) {
                true => (1, 0),
                false => (1 + rng.below(6), {
                    next_id += 1;
                    next_id
                }),
            };
            for _ in 0..size {
                tokens.push(if rng.chance(10) {
                    0
                } else {
                    rng.below(200) as i64
                });
                groups.push(id);
            }
        }
        // SAFETY: the stream is made here and freed once.
        unsafe {
            let mut s = ptr::null_mut();
            ok(cupel_stream_new(target, batch, &mut s));
            let mut full = false;
            for (i, (&t, &g)) in tokens.iter().zip(&groups).enumerate() {
                let score = ((i * 7919) % 101) as f64 / 100.0;
                ok(cupel_stream_push_grouped(s, t, score, g, &mut full));
            }
            let mut out = vec![0usize; tokens.len()];
            let mut n = 0;
            ok(cupel_stream_finish(s, out.as_mut_ptr(), out.len(), &mut n));
            cupel_stream_free(s);
            if let Err(e) = check_groups(&out[..n], &groups, true) {
                panic!("case {case}: {e}");
            }
            let used: i64 = out[..n].iter().map(|&i| tokens[i]).sum();
            assert!(used <= target.max(0), "case {case}: {used} > {target}");
        }
    }
}

#[test]
fn the_stream_refuses_a_split_group_and_stays_unchanged() {
    // SAFETY: the stream is made here and freed once.
    unsafe {
        let mut s = ptr::null_mut();
        ok(cupel_stream_new(1000, 2, &mut s));
        let mut full = false;
        ok(cupel_stream_push_grouped(s, 10, 0.5, 7, &mut full));
        ok(cupel_stream_push_grouped(s, 10, 0.5, 7, &mut full));
        ok(cupel_stream_push_grouped(s, 10, 0.5, 0, &mut full));
        let status = cupel_stream_push_grouped(s, 10, 0.5, 7, &mut full);
        assert_eq!(status, CUPEL_ERROR_INVALID_ARGUMENT);
        assert!(
            last_error().contains("group is 7, which ended before item 3"),
            "{}",
            last_error()
        );
        ok(cupel_stream_push_grouped(s, i64::MAX, 0.5, 8, &mut full));
        let status = cupel_stream_push_grouped(s, 1, 0.5, 8, &mut full);
        assert_eq!(status, CUPEL_ERROR_INVALID_ARGUMENT);
        assert!(
            last_error().contains("group 8's tokens"),
            "{}",
            last_error()
        );
        let mut out = [0usize; 8];
        let mut n = 0;
        ok(cupel_stream_finish(s, out.as_mut_ptr(), out.len(), &mut n));
        // Items 0-1 (group 7) and 2 fit; item 3 (group 8, INT64_MAX) does not.
        assert_eq!(&out[..n], &[0, 1, 2]);
        cupel_stream_free(s);
    }
}

// ---- the whole pipeline -------------------------------------------------

/// A random pipeline case with random groups; zero-token members made
/// more likely.
fn grouped_case(rng: &mut Rng) -> Case {
    let mut c = cases::random_case(rng);
    let groups = random_groups(rng, c.items.len());
    for (it, g) in c.items.iter_mut().zip(groups) {
        it.group = g;
        if g != 0 && rng.chance(8) {
            it.tokens = 0;
        }
    }
    c
}

#[test]
fn the_pipeline_keeps_groups_whole_and_explains_them() {
    let mut rng = Rng(0x6A0F_1157_0000_0006);
    let (mut ran, mut excluded_groups) = (0, 0);
    for case in 0..3000 {
        let c = grouped_case(&mut rng);
        let groups: Vec<u64> = c.items.iter().map(|i| i.group).collect();
        // SAFETY: ours_raw makes and frees its own handles.
        let result = unsafe { ours_raw(&c) };
        let again = unsafe { ours_raw(&c) };
        let ((run, (placed, included, excluded)), (run2, _)) = match (result, again) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "case {case}: not deterministic");
                continue;
            }
            (a, b) => panic!("case {case}: {:?} then {:?}", a.is_ok(), b.is_ok()),
        };
        assert_eq!(run, run2, "case {case}: not deterministic");
        ran += 1;
        if let Err(e) = check_groups(&placed, &groups, true) {
            panic!("case {case}: {e}\n{c:#?}");
        }
        // The budget: pinned items (a group's pin pins it all) may exceed
        // the target, and the count slicers' Phase 1 may when Proceed.
        let m = members(&groups);
        let pinned = |i: usize| {
            c.items[i].pinned
                || (groups[i] != 0 && m[&groups[i]].iter().any(|&k| c.items[k].pinned))
        };
        let used: i64 = placed.iter().map(|&i| c.items[i].tokens).sum();
        let pinned_used: i64 = placed
            .iter()
            .filter(|&&i| pinned(i))
            .map(|&i| c.items[i].tokens)
            .sum();
        let counts = matches!(
            c.slicer,
            SlicerSpec::CountQuota(_) | SlicerSpec::CountKnapsack(..)
        );
        if c.overflow == 0 {
            assert!(
                used <= c.target,
                "case {case}: Throw let {used} > {} through",
                c.target
            );
        } else if !counts {
            assert!(
                used <= c.target.max(pinned_used),
                "case {case}: {used} > {}",
                c.target
            );
        }
        // The report: every item once; a group's members share their
        // fate, and an excluded group's members its reason and tokens.
        let mut fate: HashMap<usize, (bool, i32, i64, u64)> = HashMap::new();
        for (d, inc) in included
            .iter()
            .map(|d| (d, true))
            .chain(excluded.iter().map(|d| (d, false)))
        {
            assert!(fate
                .insert(d.item_index, (inc, d.reason, d.group_tokens, d.group))
                .is_none());
            assert_eq!(d.group, groups[d.item_index], "case {case}");
            assert_eq!(d.item_tokens, c.items[d.item_index].tokens, "case {case}");
        }
        assert_eq!(fate.len(), c.items.len(), "case {case}");
        for (g, mem) in &m {
            let sum = mem
                .iter()
                .fold(0i64, |a, &i| a.saturating_add(c.items[i].tokens));
            let first = fate[&mem[0]];
            for &i in mem {
                let f = fate[&i];
                assert_eq!(f.0, first.0, "case {case}: group {g} split in the report");
                assert_eq!(f.3, *g);
                assert_eq!(f.2, sum, "case {case}: group_tokens");
                if !f.0 {
                    assert_eq!(
                        f.1, first.1,
                        "case {case}: group {g}'s members excluded for different reasons"
                    );
                }
            }
            if !first.0 {
                excluded_groups += 1;
            }
        }
    }
    assert!(ran > 1500, "{ran}");
    assert!(excluded_groups > 1000, "{excluded_groups}");
}

#[test]
fn one_member_groups_give_the_ungrouped_result() {
    // With deduplication off (grouped items take no part in it), a list in
    // which every item is its own group runs exactly as the ungrouped one.
    let mut rng = Rng(0x6A0F_1157_0000_0007);
    for case in 0..1500 {
        let mut c = cases::random_case(&mut rng);
        c.dedup = false;
        // SAFETY: ours_raw makes and frees its own handles.
        let plain = unsafe { ours_raw(&c) };
        for (k, it) in c.items.iter_mut().enumerate() {
            it.group = 1000 + k as u64;
        }
        let grouped = unsafe { ours_raw(&c) };
        match (plain, grouped) {
            (Ok((a, _)), Ok((b, _))) => assert_eq!(a, b, "case {case}"),
            (Err(a), Err(b)) => assert_eq!(a, b, "case {case}"),
            (a, b) => panic!("case {case}: {:?} vs {:?}", a.is_ok(), b.is_ok()),
        }
    }
}

#[test]
fn a_group_whose_tokens_overflow_is_refused_by_name() {
    let l = List {
        tokens: vec![i64::MAX - 5, 3, 10],
        scores: vec![0.5, 0.5, 0.5],
        kinds: vec!["ToolCall", "ToolOutput", "Message"],
        groups: vec![42, 0, 42],
    };
    // SAFETY: every handle is made here and freed once.
    unsafe {
        let items = push(&l);
        let slicer = our_slicer(&SlicerSpec::Greedy);
        let mut budget = ptr::null_mut();
        ok(cupel_budget_new(100, 100, &mut budget));
        let mut out = [0usize; 3];
        let mut n = 0;
        let status = cupel_slice(
            slicer,
            items,
            budget,
            0,
            out.as_mut_ptr(),
            3,
            &mut n,
            ptr::null_mut(),
        );
        assert_eq!(status, CUPEL_ERROR_INVALID_ARGUMENT);
        let e = last_error();
        assert!(
            e.contains("group 42") && e.contains("items 0, 2") && e.contains("INT64_MAX"),
            "{e}"
        );
        cupel_budget_free(budget);
        cupel_slicer_free(slicer);
        cupel_items_free(items);
    }
}
