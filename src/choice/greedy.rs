//! GreedySlice over options (a list with variants): the incremental
//! efficiency greedy of the multiple-choice knapsack, then two repairs that
//! give the contract's guarantees.
//!
//! 1. Each class's options that fit the target, as steps up its upper
//!    convex hull from "nothing" (0 tokens, score 0): each step the one of
//!    highest extra score per extra token (a step of no extra tokens first;
//!    among equal ones the smallest).
//! 2. All steps of all classes by that efficiency, descending (ties: the
//!    class's position among the candidates, which is Sort-stage order,
//!    then the step): a step is taken when its class stands at the step
//!    before it and its extra tokens fit what is left. On one option per
//!    class this is GreedySlice's density pass.
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

/// Steps ordered in the first round at least; doubled every round.
const FIRST_ROUND: usize = 1024;

/// One step up a class's hull.
#[derive(Clone, Copy)]
struct Step {
    class: u32,
    /// The option (position in `cands`) the step arrives at.
    option: u32,
    extra: i64,
}

/// GREEDY-SLICE over the options `cands` of `items` (a view with classes,
/// in Sort-stage order of their classes) with `target` tokens: the chosen
/// options, in the order their classes were first chosen.
pub fn greedy(items: &View<'_>, cands: &[u32], target: i64) -> Vec<u32> {
    greedy_rounds(items, cands, target, FIRST_ROUND)
}

/// [`greedy`] whose first round orders `first_round` steps.
fn greedy_rounds(items: &View<'_>, cands: &[u32], target: i64, first_round: usize) -> Vec<u32> {
    if cands.is_empty() || target <= 0 {
        return Vec::new();
    }
    let classes = items.classes().expect("a view of options");
    let runs = class_runs(classes, cands);
    let tokens = |p: usize| items.tokens(cands[p]);
    let score = |p: usize| items.score(cands[p]);
    // 1. Hull steps per class, in class then step order; each one's key
    // sorts by efficiency descending, then that order.
    let mut steps: Vec<Step> = Vec::with_capacity(cands.len());
    let mut keys: Vec<u128> = Vec::with_capacity(cands.len());
    let mut opts: Vec<(i64, f64)> = Vec::new();
    for (c, &(start, end)) in runs.iter().enumerate() {
        opts.clear();
        opts.extend((start..end).map(|p| (tokens(p), score(p))));
        hull(&opts, target, |_, efficiency, extra, o| {
            keys.push(((desc_bits(efficiency) as u128) << 64) + steps.len() as u128);
            steps.push(Step {
                class: c as u32,
                option: (start + o) as u32,
                extra,
            });
            true
        });
    }
    // 2. One pass over the steps by efficiency: a class takes its steps in
    // order (each step's efficiency is below the one before it), so a step
    // counts only while its class has taken every step before it.
    let mut at: Vec<Option<usize>> = vec![None; runs.len()];
    // Per class: the step it stands at (its next step's index), or dead.
    let mut next: Vec<u32> = vec![u32::MAX; runs.len()];
    for (k, s) in steps.iter().enumerate().rev() {
        next[s.class as usize] = k as u32;
    }
    let mut order: Vec<u32> = Vec::new();
    let mut left = target;
    // In rounds, as GreedySlice does: the most efficient `round` steps
    // (a selection, not a sort of all), in order; then every step that no
    // longer fits what is left, or whose class is dead, leaves the pool
    // (at its turn it would be passed over), and the round doubles.
    let mut pool = keys;
    let mut round = first_round;
    while !pool.is_empty() {
        let head = round.min(pool.len());
        if head < pool.len() {
            pool.select_nth_unstable(head - 1);
        }
        pool[..head].sort_unstable();
        for &key in &pool[..head] {
            let k = key as u32;
            let s = steps[k as usize];
            let c = s.class as usize;
            if next[c] != k {
                continue;
            }
            if s.extra > left {
                next[c] = u32::MAX;
                continue;
            }
            if at[c].is_none() {
                order.push(s.class);
            }
            at[c] = Some(s.option as usize);
            left -= s.extra;
            let after = k as usize + 1;
            next[c] = match steps.get(after) {
                Some(n) if n.class == s.class => after as u32,
                _ => u32::MAX,
            };
        }
        pool.drain(..head);
        pool.retain(|&key| {
            let s = steps[key as u32 as usize];
            s.extra <= left && next[s.class as usize] != u32::MAX
        });
        round = round.saturating_mul(2);
    }
    // 3. Repairs.
    let lightest: Vec<i64> = runs
        .iter()
        .map(|&(start, end)| (start..end).map(tokens).min().unwrap_or(i64::MAX))
        .collect();
    loop {
        let mut changed = false;
        // Unselected classes that still fit, in candidate order.
        for c in 0..runs.len() {
            if at[c].is_some() || lightest[c] > left {
                continue;
            }
            let (start, end) = runs[c];
            opts.clear();
            opts.extend((start..end).map(|p| (tokens(p), score(p))));
            if let Some(o) = best_fit(&opts, left) {
                at[c] = Some(start + o);
                order.push(c as u32);
                left -= opts[o].0;
                changed = true;
            }
        }
        // Selected classes that can move up.
        for &c in &order {
            let c = c as usize;
            let (start, end) = runs[c];
            opts.clear();
            opts.extend((start..end).map(|p| (tokens(p), score(p))));
            let cur = at[c].expect("a chosen class") - start;
            if let Some(o) = best_up(&opts, cur, left) {
                at[c] = Some(start + o);
                left -= opts[o].0 - opts[cur].0;
                changed = true;
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

/// The steps up the upper convex hull of a class's options `opts`
/// (tokens, score) from "nothing" (0 tokens, score 0), over the options
/// that fit `target`: each step the one of highest extra score per extra
/// token (a step of no extra tokens first; among equal ones the smallest
/// extra, then the earliest option). Calls `f(step, efficiency, extra,
/// option)` for each in order while it returns true.
pub(crate) fn hull(
    opts: &[(i64, f64)],
    target: i64,
    mut f: impl FnMut(u16, f64, i64, usize) -> bool,
) {
    let (mut t0, mut s0) = (0i64, 0f64);
    for step in 0u16.. {
        let mut best: Option<(f64, i64, usize)> = None;
        for (o, &(t, s)) in opts.iter().enumerate() {
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
                best = Some((eff, dt, o));
            }
        }
        let Some((efficiency, extra, o)) = best else {
            return;
        };
        if !f(step, efficiency, extra, o) {
            return;
        }
        (t0, s0) = opts[o];
    }
}

/// Orders options (tokens, score) for the repairs: higher score first,
/// then fewer tokens, then the earlier option.
fn better(opts: &[(i64, f64)], p: usize, q: usize) -> Ordering {
    let ((tp, sp), (tq, sq)) = (opts[p], opts[q]);
    sq.partial_cmp(&sp)
        .unwrap_or(Ordering::Equal)
        .then(tp.cmp(&tq))
        .then(p.cmp(&q))
}

/// The repair of an unselected class: its best option (see [`better`])
/// that fits `left` tokens.
pub(crate) fn best_fit(opts: &[(i64, f64)], left: i64) -> Option<usize> {
    (0..opts.len())
        .filter(|&p| opts[p].0 <= left)
        .min_by(|&p, &q| better(opts, p, q))
}

/// The repair of a class selected at option `cur`: its best option of a
/// strictly higher score whose extra tokens fit `left`.
pub(crate) fn best_up(opts: &[(i64, f64)], cur: usize, left: i64) -> Option<usize> {
    let (t, s) = opts[cur];
    (0..opts.len())
        .filter(|&p| opts[p].1 > s && opts[p].0 - t <= left)
        .min_by(|&p, &q| better(opts, p, q))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::Options;
    use crate::items::{Items, NewItem};

    /// Items of (tokens, score, variants as (tokens, value)).
    type Spec<'a> = &'a [(i64, f64, &'a [(i64, f64)])];

    /// GreedySlice over `spec`, candidates in item order: the chosen
    /// (item, variant) pairs.
    fn run(spec: Spec<'_>, target: i64) -> Vec<(u32, u8)> {
        let it = crate::choice::test_items(spec);
        let view = it.view();
        let cands: Vec<u32> = (0..spec.len() as u32).collect();
        let one = |p: usize| std::slice::from_ref(&cands[p]);
        let o = Options::build(&it, view, view, &cands, one);
        let all: Vec<u32> = (0..o.len() as u32).collect();
        let chosen = greedy(&o.view(view), &all, target);
        o.expand(view, &chosen, one)
            .iter()
            .map(|c| (c.item, c.variant))
            .collect()
    }

    #[test]
    fn rounds_choose_what_one_sort_of_every_step_chooses() {
        // Thousands of steps: the pass in rounds (the first of 1024 steps,
        // or of 7) against one round holding every step.
        let mut rng = crate::testing::Rng(0x0027_0027);
        for case in 0..40 {
            let mut it = Items::new();
            let n = 500 + rng.below(3000) as usize;
            for i in 0..n {
                let tokens = 1 + rng.below(400) as i64;
                let score = rng.below(1000) as f64 / 1000.0;
                it.push(NewItem {
                    tokens,
                    score,
                    kind: None,
                })
                .unwrap();
                for _ in 0..rng.below(3) {
                    let t = rng.below(tokens as u64 + 50) as i64;
                    let v = (1 + rng.below(20)) as f64 / 20.0;
                    it.add_variant(i, t, v, None).unwrap();
                }
            }
            let view = it.view();
            let cands = crate::sort::sort_stage(&view);
            let one = |p: usize| std::slice::from_ref(&cands[p]);
            let o = Options::build(&it, view, view, &cands, one);
            let all: Vec<u32> = (0..o.len() as u32).collect();
            let target = 1 + rng.below(60_000) as i64;
            let options = o.view(view);
            let whole = greedy_rounds(&options, &all, target, usize::MAX);
            for first in [FIRST_ROUND, 7] {
                let got = greedy_rounds(&options, &all, target, first);
                assert_eq!(
                    got, whole,
                    "case {case}: n {n} target {target} first {first}"
                );
            }
        }
    }

    #[test]
    fn an_upgrade_spends_what_is_left_before_the_next_one() {
        // Item 0 climbs to its 10-token variant, item 1 to its 10-token one,
        // item 2 goes in: 60 of 100 left. Neither big step fits (90 more
        // each), so the repair moves item 0 up to its 50-token variant (40
        // more: 20 left), then item 1 to its 25-token one (15 more).
        let spec: Spec<'_> = &[
            (100, 2.0, &[(10, 0.5), (50, 0.6)]),
            (100, 1.9, &[(10, 0.9 / 1.9), (25, 1.0 / 1.9)]),
            (20, 0.5, &[]),
        ];
        assert_eq!(run(spec, 100), vec![(0, 2), (1, 2), (2, 0)]);
        // Item 2 six tokens larger: after the first move 14 are left, and
        // the second (15 more) no longer fits.
        let spec: Spec<'_> = &[spec[0], spec[1], (26, 0.5, &[])];
        assert_eq!(run(spec, 100), vec![(0, 2), (1, 1), (2, 0)]);
    }

    #[test]
    fn nothing_for_a_non_positive_target() {
        let spec: Spec<'_> = &[(0, 0.5, &[]), (10, 0.5, &[(1, 0.5)])];
        assert!(run(spec, 0).is_empty());
        assert!(run(spec, -3).is_empty());
    }

    #[test]
    fn steps_go_by_efficiency_and_a_class_climbs_its_hull() {
        // Item 0: 10 tokens at 1.0 as its variant, 100 at 1.5 as pushed;
        // item 1: 50 at 0.4. At 100: item 0's variant (0.1 per token), item
        // 1 (0.008); item 0's step up needs 90 more, 40 are left.
        let spec: Spec<'_> = &[(100, 1.5, &[(10, 2.0 / 3.0)]), (50, 0.4, &[])];
        assert_eq!(run(spec, 100), vec![(0, 1), (1, 0)]);
        // At 150 both steps of item 0 fit: it ends as pushed.
        assert_eq!(run(spec, 150), vec![(0, 0), (1, 0)]);
    }

    #[test]
    fn a_zero_token_variant_is_taken_first() {
        let spec: Spec<'_> = &[(500, 0.9, &[(0, 0.1)]), (20, 0.5, &[])];
        assert_eq!(run(spec, 30), vec![(0, 1), (1, 0)]);
    }

    #[test]
    fn repairs_take_what_still_fits_and_move_up() {
        // Item 1 scores 0 (no hull step): the repair takes it while it fits.
        let spec: Spec<'_> = &[(40, 0.5, &[]), (5, 0.0, &[])];
        assert_eq!(run(spec, 50), vec![(0, 0), (1, 0)]);
        assert_eq!(run(spec, 44), vec![(0, 0)]);
        // Item 0's best step is its 10-token variant; the pass skips the
        // 60-token step up (item 1 took the room first) and the repair has
        // no room either; at 70 the step up fits after item 1.
        let spec: Spec<'_> = &[(70, 1.0, &[(10, 0.5)]), (10, 0.2, &[])];
        assert_eq!(run(spec, 75), vec![(0, 1), (1, 0)]);
        assert_eq!(run(spec, 80), vec![(0, 0), (1, 0)]);
    }
}
