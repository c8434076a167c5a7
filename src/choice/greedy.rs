//! GreedySlice over options (a list with variants): the incremental
//! efficiency greedy of the multiple-choice knapsack, then two repairs that
//! give the contract's guarantees.
//!
//! 1. Each class's options that fit the target, as steps up its upper
//!    convex hull from "nothing" (0 tokens, score 0): each step the one of
//!    highest extra score per extra token (a step of no extra tokens first).
//! 2. All steps of all classes by that efficiency, descending (ties: the
//!    Sort-stage key descending, then candidate position, then step): a
//!    step is taken when its class stands at the step before it and its
//!    extra tokens fit what is left. On one option per class this is
//!    GreedySlice's density pass.
//! 3. Repairs, until neither changes anything: a class with nothing
//!    selected takes its highest-scoring option that fits what is left
//!    (candidate order); a selected class moves to its highest-scoring
//!    option whose extra tokens fit, when that scores strictly higher.
//!
//! So: at most one option per class, within the target; no option of an
//! unselected class fits in what is left; no selected class has an option
//! of strictly higher score whose extra tokens fit in what is left.

use std::cmp::Ordering;

use super::class_runs;
use crate::items::View;
use crate::sort::desc_bits;

/// One step up a class's hull.
struct Step {
    efficiency: f64,
    tie: f64,
    class: u32,
    level: u32,
    /// The option (position in `cands`) the step arrives at.
    option: u32,
    extra: i64,
}

/// GREEDY-SLICE over the options `cands` of `items` (a view with classes)
/// with `target` tokens: the chosen options, in the order they were chosen.
pub fn greedy(items: &View<'_>, cands: &[u32], target: i64) -> Vec<u32> {
    if cands.is_empty() || target <= 0 {
        return Vec::new();
    }
    let classes = items.classes().expect("a view of options");
    let runs = class_runs(classes, cands);
    let ties = items.ties();
    let tokens = |p: usize| items.tokens(cands[p]);
    let score = |p: usize| items.score(cands[p]);
    // 1. Hull steps per class.
    let mut steps = Vec::new();
    for (c, &(start, end)) in runs.iter().enumerate() {
        let (mut t0, mut s0, mut level) = (0i64, 0f64, 0u32);
        loop {
            let mut best: Option<(f64, i64, usize)> = None;
            for p in start..end {
                let (t, s) = (tokens(p), score(p));
                if t > target || s <= s0 || t < t0 {
                    continue;
                }
                let dt = t - t0;
                let eff = if dt == 0 {
                    f64::MAX
                } else {
                    (s - s0) / dt as f64
                };
                let better = match best {
                    None => true,
                    Some((e, bdt, _)) => eff > e || (eff == e && dt < bdt),
                };
                if better {
                    best = Some((eff, dt, p));
                }
            }
            let Some((efficiency, extra, p)) = best else {
                break;
            };
            steps.push(Step {
                efficiency,
                tie: ties[cands[p] as usize],
                class: c as u32,
                level,
                option: p as u32,
                extra,
            });
            (t0, s0, level) = (tokens(p), score(p), level + 1);
        }
    }
    // 2. One pass over the steps by efficiency.
    steps.sort_unstable_by(|a, b| {
        desc_bits(a.efficiency)
            .cmp(&desc_bits(b.efficiency))
            .then(desc_bits(a.tie).cmp(&desc_bits(b.tie)))
            .then(a.class.cmp(&b.class))
            .then(a.level.cmp(&b.level))
    });
    let mut at: Vec<Option<usize>> = vec![None; runs.len()];
    let mut level = vec![0u32; runs.len()];
    let mut order: Vec<u32> = Vec::new();
    let mut left = target;
    for s in &steps {
        let c = s.class as usize;
        if level[c] != s.level || s.extra > left {
            continue;
        }
        if at[c].is_none() {
            order.push(s.class);
        }
        at[c] = Some(s.option as usize);
        level[c] += 1;
        left -= s.extra;
    }
    // 3. Repairs.
    let better = |p: usize, q: usize| -> Ordering {
        // Higher score first, then fewer tokens, then the earlier option.
        score(q)
            .partial_cmp(&score(p))
            .unwrap_or(Ordering::Equal)
            .then(tokens(p).cmp(&tokens(q)))
            .then(p.cmp(&q))
    };
    loop {
        let mut changed = false;
        for (c, &(start, end)) in runs.iter().enumerate() {
            match at[c] {
                None => {
                    let best = (start..end)
                        .filter(|&p| tokens(p) <= left)
                        .min_by(|&p, &q| better(p, q));
                    if let Some(p) = best {
                        at[c] = Some(p);
                        order.push(c as u32);
                        left -= tokens(p);
                        changed = true;
                    }
                }
                Some(cur) => {
                    let (t, s) = (tokens(cur), score(cur));
                    let best = (start..end)
                        .filter(|&p| score(p) > s && tokens(p) - t <= left)
                        .min_by(|&p, &q| better(p, q));
                    if let Some(p) = best {
                        at[c] = Some(p);
                        left -= tokens(p) - t;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    order
        .into_iter()
        .map(|c| cands[at[c as usize].expect("a chosen class")])
        .collect()
}
