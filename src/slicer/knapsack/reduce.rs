//! The Lagrangian reduction of the multiple-choice knapsack (KnapsackSlice
//! over options, `choice.rs`): options that are in no best selection go
//! before the DP, without changing what it chooses.
//!
//! For any `lambda >= 0` and any selection `X` of at most one option per
//! class that weighs at most `capacity`:
//!
//! ```text
//! value(X) = sum over X of (v - lambda d) + lambda weight(X)
//!         <= sum over X of (v - lambda d) + lambda capacity
//! ```
//!
//! so a selection holding option `o` (weight `d`, value `v`) of class `j`
//! is worth at most `U - g_j + (v - lambda d)`, where `g_j` is the largest
//! of 0 and `v' - lambda d'` over the class's options and
//! `U = lambda capacity + sum of g_j`. A selection that fits, found
//! greedily, is worth `LB`; an option whose bound is below `LB` is in no
//! best selection. `lambda` is the LP relaxation's: the efficiency of the
//! step, in decreasing efficiency over every class's convex hull, that no
//! longer fits; then `U - LB` is small and most options of classes far
//! from it go.
//!
//! A guess of the best value goes further (`GUESS`): the options whose
//! bound is below `U - GUESS (U - LB)` (with the allowance for rounding)
//! are left out too (`Buffers::tight`) and the DP runs over the others;
//! when the value it chooses reaches that bound (`Buffers::guess`), every
//! option left out is in no best selection and the choice stands; else
//! the DP runs again over what the gap leaves. At bucket 1 on the bench's
//! list the table has 734 option rows instead of 1,590 (the plain list's
//! has 725).
//!
//! Why the DP's choice stays the same (not only its value): the
//! reconstruction walks cells `(class, w)` of a best selection `S`; `S`
//! holds no dropped option, so those cells keep their values in the
//! smaller table, every other cell can only lose value, and a keep bit is
//! set where an option is strictly worth more than the cell and the
//! options before it: the option `S` takes at a cell still is, the ones
//! after it still are not, and a class `S` skips still has no bit set.

/// Hull steps as (efficiency, weight).
pub(super) type Steps = Vec<(f64, i64)>;

/// Buffers of [`reduce`], kept between calls with the knapsack's others.
#[derive(Default)]
pub(super) struct Buffers {
    steps: Steps,
    /// Every class's hull points but (0, 0), one class after another.
    hulls: Vec<(i64, i64)>,
    /// Where each class's points end in `hulls`.
    ends: Vec<usize>,
    /// Per class: its best reduced value (>= 0) and the point it takes.
    best: Vec<(f64, (i64, i64))>,
    /// Per option: whether it stays.
    pub keep: Vec<bool>,
    /// Per option: whether it stays for a guess of the best value, a
    /// quarter of the gap below `U` ([`GUESS`]), and the value a best
    /// selection of the options that stay for it must reach for every
    /// other option to be in no best selection (`guess`).
    pub tight: Vec<bool>,
    pub guess: f64,
}

/// The guess of the best value: `U` less this share of the gap. On the
/// bench's lists at bucket 1 the gap is a few tokens' worth and the best
/// selection is within a tenth of it of `U`.
pub(super) const GUESS: f64 = 0.25;

impl Buffers {
    /// Cleared buffers for a sample's steps and one class's hull.
    pub(super) fn sample(&mut self) -> (&mut Steps, &mut Vec<(i64, i64)>) {
        self.steps.clear();
        self.hulls.clear();
        (&mut self.steps, &mut self.hulls)
    }

    pub(super) fn bytes(&self) -> usize {
        self.steps.capacity() * 16
            + self.hulls.capacity() * 16
            + self.ends.capacity() * 8
            + self.best.capacity() * 24
            + self.keep.capacity()
            + self.tight.capacity()
    }
}

/// The classes' options `opts` (`classes`: each one's range, lightest
/// first and worth more each, as `choice.rs` leaves them; as (position,
/// weight, value)): `b.keep[o]` false for each option `o` in no best
/// selection of weight at most `capacity`. Returns lambda and the gap
/// `U - LB` (with its allowance for rounding), or `None` for values too
/// large to bound in floating point (every option kept).
pub(super) fn reduce(
    classes: impl Iterator<Item = (usize, usize)> + Clone,
    opts: &[(u32, i64, i64)],
    capacity: i64,
    b: &mut Buffers,
) -> Option<(f64, f64)> {
    b.keep.clear();
    b.keep.resize(opts.len(), true);
    b.steps.clear();
    b.hulls.clear();
    b.ends.clear();
    b.best.clear();
    // Values past 2^50 in total lose exactness in f64: no reduction.
    let mut total = 0i64;
    for (s, e) in classes.clone() {
        let from = b.hulls.len();
        hull_points(&opts[s..e], &mut b.hulls);
        b.ends.push(b.hulls.len());
        b.steps.extend(hull_steps(&b.hulls[from..]));
        total = total.saturating_add(b.hulls[from..].last().map_or(0, |p| p.1));
    }
    if total >= 1 << 50 {
        return None;
    }
    let lambda = break_efficiency(&mut b.steps, capacity).unwrap_or(0.0);
    let reduced = |p: (i64, i64)| p.1 as f64 - lambda * p.0 as f64;
    // U; and a selection that fits: each class's hull steps more efficient
    // than lambda (they fit: that is how it was found), then, class by
    // class, the most valuable heavier option that fits what is left. The
    // largest reduced value of a class is at a point of its hull.
    let mut upper = lambda * capacity as f64;
    let (mut weight, mut lower) = (0i64, 0i64);
    let mut from = 0;
    for &end in &b.ends {
        let (mut g, mut pick, mut last) = (0.0f64, (0, 0), (0, 0));
        let mut taking = true;
        for &p in &b.hulls[from..end] {
            g = g.max(reduced(p));
            taking = taking && efficiency(last, p) > lambda;
            if taking {
                pick = p;
            }
            last = p;
        }
        from = end;
        upper += g;
        weight += pick.0;
        lower += pick.1;
        b.best.push((g, pick));
    }
    if capacity < weight {
        debug_assert!(
            false,
            "the steps above the break weigh {weight} > {capacity}"
        );
        return None;
    }
    for ((s, e), &(_, (d0, v0))) in classes.clone().zip(&b.best) {
        let room = capacity - weight + d0;
        if let Some(o) = opts[s..e].iter().rev().find(|o| o.1 <= room) {
            if v0 < o.2 {
                weight += o.1 - d0;
                lower += o.2 - v0;
            }
        }
    }
    let gap = upper - lower as f64 + allowance(upper);
    let tight;
    (tight, b.guess) = guess_limits(upper, lower);
    b.tight.clear();
    b.tight.resize(opts.len(), true);
    for ((s, e), &(g, _)) in classes.zip(&b.best) {
        let both = b.keep[s..e].iter_mut().zip(&mut b.tight[s..e]);
        for (o, (k, t)) in opts[s..e].iter().zip(both) {
            let below = g - reduced((o.1, o.2));
            *k = below <= gap;
            *t = below <= tight;
        }
    }
    Some((lambda, gap))
}

/// For the guess of the best value, with `U` and `LB` (`upper`,
/// `lower`): how far below its class's best an option's reduced value may
/// be and the option stay, and the value a choice over the options that
/// stay must reach ([`Buffers::guess`]). An option left out is worth at
/// most `U` less the first, within the allowance for rounding; the second
/// is that and another allowance above it.
fn guess_limits(upper: f64, lower: i64) -> (f64, f64) {
    let a = allowance(upper);
    let tight = (upper - lower as f64) * GUESS + a;
    (tight, upper - tight + 2.0 * a)
}

/// Rounding: every term of `U` is exact below 2^53 but for the products
/// and sums with lambda; a relative allowance well above their error.
fn allowance(upper: f64) -> f64 {
    1e-9 * (upper.abs() + 1.0)
}

/// Appends to `hull` the upper convex hull of the class's options `opts`
/// (weights and values increasing) from (0, 0), but (0, 0) itself:
/// efficiencies from point to point strictly decreasing.
pub(super) fn hull_points(opts: &[(u32, i64, i64)], hull: &mut Vec<(i64, i64)>) {
    let from = hull.len();
    for &(_, d, v) in opts {
        // Pop the last point while it lies on or below the line from the
        // one before it (or (0, 0)) to this one.
        while hull.len() > from {
            let b = hull[hull.len() - 1];
            let a = match hull.len() - from {
                1 => (0, 0),
                _ => hull[hull.len() - 2],
            };
            let left = (b.1 - a.1) as i128 * (d - a.0) as i128;
            let right = (v - a.1) as i128 * (b.0 - a.0) as i128;
            if left > right {
                break;
            }
            hull.pop();
        }
        hull.push((d, v));
    }
}

/// The steps of a class's hull `points` (from (0, 0)) as (efficiency,
/// weight), in order.
pub(super) fn hull_steps(points: &[(i64, i64)]) -> impl Iterator<Item = (f64, i64)> + '_ {
    let from = std::iter::once((0, 0)).chain(points.iter().copied());
    from.zip(points)
        .map(|(a, &b)| (efficiency(a, b), b.0 - a.0))
}

/// Value per unit of weight from hull point `a` to `b`.
pub(super) fn efficiency(a: (i64, i64), b: (i64, i64)) -> f64 {
    (b.1 - a.1) as f64 / (b.0 - a.0) as f64
}

/// The efficiency of the first step, in decreasing efficiency, that does
/// not fit in `room` with every step before it; `None` when all fit.
/// Weighted selection: linear time on average.
pub(super) fn break_efficiency(steps: &mut [(f64, i64)], mut room: i64) -> Option<f64> {
    let mut s = steps;
    while !s.is_empty() {
        let mid = s.len() / 2;
        s.select_nth_unstable_by(mid, |a, b| b.0.total_cmp(&a.0));
        let upper = s[..mid].iter().fold(0i64, |a, x| a.saturating_add(x.1));
        if upper > room {
            s = &mut s[..mid];
        } else if upper.saturating_add(s[mid].1) > room {
            return Some(s[mid].0);
        } else {
            room -= upper + s[mid].1;
            s = &mut s[mid + 1..];
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hull_skips_options_on_or_below_it() {
        let mut hull = vec![(7, 7)];
        // (2, 10), (4, 12) below the line to (6, 30), (8, 31).
        hull_points(&[(0, 2, 10), (1, 4, 12), (2, 6, 30), (3, 8, 31)], &mut hull);
        assert_eq!(hull, [(7, 7), (6, 30), (8, 31)], "appended");
        assert_eq!(
            (efficiency((0, 0), hull[1]), efficiency(hull[1], hull[2])),
            (5.0, 0.5)
        );
        // On the line: dropped too (efficiencies strictly decrease).
        hull.clear();
        hull_points(&[(0, 1, 5), (1, 2, 10), (2, 3, 12)], &mut hull);
        assert_eq!(hull, [(2, 10), (3, 12)]);
    }

    #[test]
    fn reduce_finds_lambda_the_gap_and_the_options_in_no_best_selection() {
        // Capacity 6. Class A: (2, 10), (5, 15); B: (3, 9); C: (1, 2),
        // (4, 8) (on one line from (0, 0): one step of 2 a unit).
        // Steps by efficiency: A 5 (2), B 3 (3), C 2 (4), A 5/3 (3): 2 + 3
        // fit, C's does not: lambda 2. U = 2 * 6 + 6 (A: 10 - 4) + 3 (B)
        // + 0 (C) = 21. The steps above: A at 2, B at 3 (19 in 5), then C's
        // (1, 2) fits the last unit: LB 21, no gap. A's (5, 15) is in no
        // best selection (at most 21 - 6 + 5 = 20); the others may be.
        let classes = [(0, 2), (2, 3), (3, 5)];
        let opts = [(0, 2, 10), (1, 5, 15), (2, 3, 9), (3, 1, 2), (4, 4, 8)];
        let mut b = Buffers::default();
        let (lambda, gap) = reduce(classes.iter().copied(), &opts, 6, &mut b).unwrap();
        assert_eq!(lambda, 2.0);
        assert!((0.0..1e-6).contains(&gap), "{gap}");
        assert_eq!(b.keep, [true, false, true, true, true]);
        assert_eq!(b.best, [(6.0, (2, 10)), (3.0, (3, 9)), (0.0, (0, 0))]);
        // Capacity 4: A 5 (2) fits, B's 3 does not: lambda 3. U = 12 + (10
        // - 6) + 0 + max(2 - 3, 8 - 12, 0) = 16; A at 2 (10), then B does
        // not fit the 2 left, C's (1, 2) does: LB 12, gap 4. Every option
        // is within it (C's (4, 8): 0 - (8 - 12) = 4 <= 4).
        let (lambda, gap) = reduce(classes.iter().copied(), &opts, 4, &mut b).unwrap();
        assert_eq!(lambda, 3.0);
        assert!((4.0..4.000_001).contains(&gap), "{gap}");
        assert_eq!(b.keep, [true; 5]);
        // Capacity 8: A at 2 and B at 3 (C's step does not fit), then A
        // moves up to (5, 15) in what is left: LB 24; U 25.
        let (lambda, gap) = reduce(classes.iter().copied(), &opts, 8, &mut b).unwrap();
        assert_eq!(lambda, 2.0);
        assert!((1.0..1.000_001).contains(&gap), "{gap}");
        // Capacity 5: the steps above lambda fill it exactly.
        let (lambda, gap) = reduce(classes.iter().copied(), &opts, 5, &mut b).unwrap();
        assert_eq!(lambda, 2.0);
        assert!((0.0..1e-6).contains(&gap), "{gap}");
        // Capacity 12: every step fits (lambda 0); the best of each class
        // (32 in 12) is the only best selection.
        let (lambda, gap) = reduce(classes.iter().copied(), &opts, 12, &mut b).unwrap();
        assert_eq!(lambda, 0.0);
        assert!((0.0..1e-6).contains(&gap), "{gap}");
        assert_eq!(b.keep, [false, true, true, false, true]);
        // A class moved up, then a later one fills what is left: P (1, 5),
        // (3, 8); R (4, 10); Q (1, 2); capacity 4. P's first step (5 a
        // unit), then R's (2.5) does not fit: lambda 2.5. P at (1, 5)
        // moves up to (3, 8), Q's (1, 2) fills the last unit: LB 10. U =
        // 10 + 2.5 (P) + 0 + 0 = 12.5.
        let classes = [(0, 2), (2, 3), (3, 4)];
        let opts = [(0, 1, 5), (1, 3, 8), (2, 4, 10), (3, 1, 2)];
        let (lambda, gap) = reduce(classes.iter().copied(), &opts, 4, &mut b).unwrap();
        assert_eq!(lambda, 2.5);
        assert!((2.5..2.500_001).contains(&gap), "{gap}");
        // Values past 2^50 in total: nothing is bounded, all kept.
        let big = [(0, 1, 1i64 << 50)];
        assert_eq!(reduce([(0, 1)].into_iter(), &big, 6, &mut b), None);
        assert_eq!(b.keep, [true]);
    }

    /// The hull against its definition: a point is on it when no two
    /// other points (or (0, 0)) have it on or below the segment between
    /// them; appended after what `hull` held.
    #[test]
    fn the_hull_is_the_upper_convex_hull_from_the_origin() {
        let mut rng = crate::testing::Rng(0x0027_8011);
        let mut hull = Vec::new();
        for _ in 0..500 {
            let n = 1 + rng.below(6) as usize;
            let mut opts: Vec<(u32, i64, i64)> = Vec::new();
            let (mut d, mut v) = (0, 0);
            for k in 0..n {
                d += 1 + rng.below(20) as i64;
                v += 1 + rng.below(50) as i64;
                opts.push((k as u32, d, v));
            }
            let before = rng.below(4) as usize;
            hull.clear();
            hull.extend((0..before).map(|k| (k as i64, -7)));
            hull_points(&opts, &mut hull);
            assert_eq!(
                &hull[..before],
                (0..before).map(|k| (k as i64, -7)).collect::<Vec<_>>()
            );
            let points: Vec<(i64, i64)> = std::iter::once((0, 0))
                .chain(opts.iter().map(|o| (o.1, o.2)))
                .collect();
            let below = |p: (i64, i64)| {
                points.iter().any(|&a| {
                    points.iter().any(|&b| {
                        a.0 < p.0
                            && p.0 < b.0
                            && (p.1 - a.1) as i128 * (b.0 - a.0) as i128
                                <= (b.1 - a.1) as i128 * (p.0 - a.0) as i128
                    })
                })
            };
            let want: Vec<(i64, i64)> =
                points[1..].iter().copied().filter(|&p| !below(p)).collect();
            assert_eq!(&hull[before..], want, "{opts:?}");
        }
    }

    /// `guess_limits` by hand: a quarter of `U - LB` and the allowance;
    /// the value to reach, `U` less that and another allowance above.
    #[test]
    fn the_guess_is_a_quarter_of_the_gap_below_the_upper_bound() {
        let a = 1e-9 * 1001.0;
        let (tight, guess) = guess_limits(1000.0, 900);
        assert!((tight - (25.0 + a)).abs() < 1e-12, "{tight}");
        assert!((guess - (975.0 + a)).abs() < 1e-12, "{guess}");
        let (tight, guess) = guess_limits(1000.0, 1000);
        assert!((tight - a).abs() < 1e-15 && (guess - (1000.0 + a)).abs() < 1e-12);
    }

    #[test]
    fn buffers_count_their_bytes() {
        let b = Buffers {
            steps: Vec::with_capacity(1),
            hulls: Vec::with_capacity(2),
            ends: Vec::with_capacity(4),
            best: Vec::with_capacity(8),
            keep: Vec::with_capacity(16),
            tight: Vec::with_capacity(32),
            guess: 0.0,
        };
        assert_eq!(b.bytes(), 16 + 32 + 32 + 8 * 24 + 16 + 32);
    }

    #[test]
    fn the_break_is_the_first_step_that_does_not_fit() {
        let mut steps: Vec<(f64, i64)> = vec![(1.0, 5), (4.0, 3), (2.0, 4), (3.0, 2), (0.5, 9)];
        // In order: 4 (3), 3 (2), 2 (4), 1 (5), 0.5 (9).
        for (room, want) in [
            (0, Some(4.0)),
            (2, Some(4.0)),
            (3, Some(3.0)),
            (5, Some(2.0)),
            (8, Some(2.0)),
            (9, Some(1.0)),
            (14, Some(0.5)),
            (22, Some(0.5)),
            (23, None),
        ] {
            let mut s = steps.clone();
            assert_eq!(break_efficiency(&mut s, room), want, "room {room}");
        }
        steps.clear();
        assert_eq!(break_efficiency(&mut steps, 5), None);
    }
}
