//! GreedySlice (spec 000): value density, greedy fill.

use std::cmp::Ordering;

use crate::items::View;
use crate::sort::desc_bits;

/// Candidates ordered in the first round at least; doubled every round.
const FIRST_ROUND: usize = 1024;

/// GREEDY-SLICE over `cands` with `target` tokens. Output in greedy
/// iteration order: density descending, then Sort-stage position.
///
/// Ties in density are broken by (Sort-stage key descending, position in
/// `cands`): the Sort-stage position whenever `cands` is in Sort-stage order
/// *or* in item order (the spec's "original index"; for a grouped list the
/// units' keys are their best members' scores, so a unit stands at its
/// first member in Sort order). So the pipeline may skip the Sort stage
/// for a top-level GreedySlice.
///
/// The single pass of the spec needs the density order only of candidates
/// that can still fit: the remaining budget never grows, so a candidate with
/// more tokens than remain is skipped whenever its turn comes. So each round
/// buckets the pool by the top bits of the density key, cuts it after the
/// first buckets whose tokens cover the remaining budget, orders only that
/// head exactly and takes what fits, then drops from the rest whatever no
/// longer fits. Rounds at least double in size: O(N log N) at worst, a few
/// O(N) passes in practice.
pub fn greedy(items: &View<'_>, cands: &[u32], target: i64) -> Vec<u32> {
    greedy_by(items, cands.len(), |pos| cands[pos as usize], target).0
}

/// [`greedy`] over all items of `items` with a token count >= 0, in index
/// order (`cands` = 0..N, not built).
pub fn greedy_all(items: &View<'_>, target: i64) -> Vec<u32> {
    greedy_by(items, items.len(), |pos| pos, target).0
}

/// Inputs of at least this many candidates are first split at a density
/// threshold estimated from a sample ([`threshold`]).
const PREFILTER_MIN: usize = 1 << 14;

/// Candidates in the threshold's sample.
const SAMPLE: usize = 1024;

/// The threshold keeps at least this many of the sample's candidates (and
/// twice the target's tokens, estimated): about 0.8 % of the input.
pub(crate) const SAMPLE_RANK: usize = 8;

/// [`greedy`] over `n` candidates, candidate `pos` being item `item(pos)`;
/// also returns how many candidates it ordered exactly (summed over the
/// rounds) and how many it put in its pools, which the tests hold down.
///
/// A large input is split at a density key `tau` ([`threshold`]): every
/// candidate at or above that density comes before every one below it in
/// the single pass, so the pass runs over the dense ones first and then
/// over those below that still fit what remains (usually a handful). The
/// split changes only how much is ordered, never the output.
fn greedy_by(
    items: &View<'_>,
    n: usize,
    item: impl Fn(u32) -> u32,
    target: i64,
) -> (Vec<u32>, usize, usize) {
    if n == 0 || target <= 0 {
        return (Vec::new(), 0, 0);
    }
    let key_of = |i: u32, t: i64| {
        desc_bits(if t == 0 {
            f64::MAX
        } else {
            items.score(i) / t as f64
        })
    };
    // Steps 1-2: (density descending key, position) of each candidate that
    // fits, those at or above the threshold's density first.
    let split = threshold(items, n, &item, target, &key_of);
    let tau = split.unwrap_or(u64::MAX);
    // Into an empty pool with empty buckets.
    let collect = |fill: &mut Fill, pool: &mut Vec<Cand>, room: i64, dense: bool| {
        debug_assert!(pool.is_empty() && fill.counts.iter().all(|&c| c == 0));
        for pos in 0..n as u32 {
            let i = item(pos);
            let t = items.tokens(i);
            // A negative token count is never a candidate (supplement 1):
            // `greedy_all` passes every item and leaves them to this test.
            if t < 0 || t > room {
                continue;
            }
            let key = key_of(i, t);
            if (key <= tau) == dense {
                // Bucketed for the first round as they are pooled.
                let b = (key >> fill.shift) as usize;
                fill.counts[b] += 1;
                fill.sums[b] = fill.sums[b].saturating_add(t);
                pool.push(Cand {
                    key,
                    pos,
                    tokens: u32::try_from(t).unwrap_or(u32::MAX),
                });
            }
        }
        fill.pooled += pool.len();
    };
    // About four candidates a bucket: smaller tables to clear and scan each
    // round, for a head a little longer to order.
    let bits = bucket_bits(n / 4);
    let mut fill = Fill {
        remaining: target,
        selected: Vec::new(),
        sorted: 0,
        pooled: 0,
        shift: 64 - bits,
        counts: vec![0; 1 << bits],
        sums: vec![0; 1 << bits],
    };
    // About 1 % of a split input is dense (see `threshold`).
    let mut pool: Vec<Cand> = Vec::with_capacity(match split {
        Some(_) => n / 64,
        None => n,
    });
    collect(&mut fill, &mut pool, target, true);
    fill.run(items, &item, &mut pool);
    if split.is_some() {
        // Below the threshold, only what fits the rest of the budget.
        let room = fill.remaining;
        if room != 0 {
            collect(&mut fill, &mut pool, room, false);
            fill.run(items, &item, &mut pool);
        }
    }
    (fill.selected, fill.sorted, fill.pooled)
}

/// The density key at which [`greedy_by`] splits an input of `n`
/// candidates: from a sample of [`SAMPLE`] evenly spaced candidates, the
/// key of the densest ones that hold [`SAMPLE_RANK`] of the sample and
/// about twice `target` tokens (each sampled candidate standing for
/// `n / SAMPLE`). None (no split) for a small input or when the sample
/// never gets there. Any key would give the same output: it decides only
/// how much each pass orders.
fn threshold(
    items: &View<'_>,
    n: usize,
    item: &impl Fn(u32) -> u32,
    target: i64,
    key_of: &impl Fn(u32, i64) -> u64,
) -> Option<u64> {
    if n < PREFILTER_MIN {
        return None;
    }
    let step = n / SAMPLE;
    let mut sample: Vec<(u64, i64)> = (0..SAMPLE)
        .filter_map(|s| {
            let i = item((s * step) as u32);
            let t = items.tokens(i);
            (0..=target).contains(&t).then(|| (key_of(i, t), t))
        })
        .collect();
    sample.sort_unstable_by_key(|p| p.0);
    let want = 2 * target as i128;
    let mut tokens = 0i128;
    for (rank, &(key, t)) in sample.iter().enumerate() {
        tokens += t as i128 * step as i128;
        if rank + 1 >= SAMPLE_RANK && tokens >= want {
            return Some(key);
        }
    }
    None
}

/// A candidate in [`Fill`]'s pool: its density key (ascending = density
/// descending), its position, and its token count when below `u32::MAX`
/// (the pool is read in rounds: its tokens at hand, not in the item store).
#[derive(Clone, Copy)]
struct Cand {
    key: u64,
    pos: u32,
    tokens: u32,
}

/// Step 3 of GREEDY-SLICE over a pool of candidates, all of them after the
/// ones already taken in the density order: one pass in density order, no
/// backtracking. The pool comes bucketed by the top bits of the density
/// key; each round cuts it after the first buckets whose tokens cover the
/// remaining budget, orders only that head exactly and takes what fits,
/// then drops from the rest whatever no longer fits and buckets it again.
struct Fill {
    remaining: i64,
    selected: Vec<u32>,
    /// Candidates ordered exactly, over all rounds.
    sorted: usize,
    /// Candidates put in the pools.
    pooled: usize,
    /// A candidate's bucket is `key >> shift`; the buckets' candidates and
    /// tokens.
    shift: u32,
    counts: Vec<usize>,
    sums: Vec<i64>,
}

impl Fill {
    /// Runs the pass over `pool`, bucketed in `counts` and `sums`; it
    /// returns with the pool empty and so the buckets too (they always
    /// count the pool), ready for the next pool.
    fn run(&mut self, items: &View<'_>, item: &impl Fn(u32) -> u32, pool: &mut Vec<Cand>) {
        let ties = items.ties();
        let tokens = |p: &Cand| match p.tokens {
            u32::MAX => items.tokens(item(p.pos)),
            t => t as i64,
        };
        let order = |a: &Cand, b: &Cand| -> Ordering {
            a.key.cmp(&b.key).then_with(|| {
                let key = |p: &Cand| desc_bits(ties[item(p.pos) as usize]);
                key(a).cmp(&key(b)).then(a.pos.cmp(&b.pos))
            })
        };
        let shift = self.shift;
        let mut round = FIRST_ROUND;
        while !pool.is_empty() {
            let cut = cut_after(
                &self.counts,
                &self.sums,
                round.min(pool.len()),
                self.remaining,
            );
            // Rest to the front, head (buckets <= cut) to the back.
            let mid = partition(pool, |p| (p.key >> shift) as usize > cut);
            // The cut bucket has candidates (or is past the last): every
            // round orders at least one, so the loop ends.
            debug_assert!(
                mid < pool.len(),
                "an empty head: cut {cut}, pool {}",
                pool.len()
            );
            pool[mid..].sort_unstable_by(order);
            self.sorted += pool.len() - mid;
            for p in &pool[mid..] {
                let t = tokens(p);
                if t <= self.remaining {
                    self.selected.push(item(p.pos));
                    self.remaining -= t;
                }
            }
            pool.truncate(mid);
            round = round.saturating_mul(2);
            // Drop what no longer fits and bucket the rest, in one pass.
            let (counts, sums) = (&mut self.counts, &mut self.sums);
            counts.fill(0);
            sums.fill(0);
            let remaining = self.remaining;
            pool.retain(|p| {
                let t = tokens(p);
                if t > remaining {
                    return false;
                }
                let b = (p.key >> shift) as usize;
                counts[b] += 1;
                sums[b] = sums[b].saturating_add(t);
                true
            });
        }
    }
}

/// [`Fill`]'s rounds for any pool, as the pass over hull steps of
/// `crate::choice::direct` uses them: the pool comes bucketed by its keys
/// (over the range they span); each round cuts it after the first buckets
/// whose tokens cover the remaining budget, orders only that head exactly
/// and offers it to the pass, then drops from the rest whatever the pass
/// says can no longer be taken and buckets it again. Any cut gives the same
/// pass: a head's keys all precede the rest's. (Fill keeps its own
/// specialised loop: through these closures GreedySlice ran 11 % slower at
/// N = 10,000.)
#[derive(Default)]
pub(crate) struct Buckets {
    /// An entry's bucket is `(key - base) >> shift` (the last for keys past
    /// the table, the first for keys below `base`); the buckets' entries
    /// and tokens.
    base: u64,
    shift: u32,
    counts: Vec<usize>,
    sums: Vec<i64>,
    /// The tokens of all entries (saturating).
    total: i64,
    /// Where each bucket's entries end, while a head is placed.
    end: Vec<usize>,
}

impl Buckets {
    /// Tables for about `n` buckets over the keys `lo..=hi` (all that the
    /// pool's keys must lie in), emptied; the tables' memory is kept from
    /// call to call.
    pub(crate) fn reset(&mut self, n: usize, lo: u64, hi: u64) {
        let bits = bucket_bits(n);
        let span = u64::BITS - (hi - lo).leading_zeros();
        self.base = lo;
        self.shift = span.saturating_sub(bits);
        self.counts.clear();
        self.counts.resize(1 << bits, 0);
        self.sums.clear();
        self.sums.resize(1 << bits, 0);
        self.total = 0;
    }

    /// The bucket of `key`.
    #[inline]
    fn bucket(&self, key: u64) -> usize {
        debug_assert!(key >= self.base, "key {key} below the buckets' base");
        ((key - self.base) >> self.shift) as usize
    }

    /// Counts an entry of `key` and `tokens` put in the pool.
    #[inline]
    pub(crate) fn add(&mut self, key: u64, tokens: i64) {
        let b = self.bucket(key);
        self.counts[b] += 1;
        self.sums[b] = self.sums[b].saturating_add(tokens);
        self.total = self.total.saturating_add(tokens);
    }

    /// Runs the pass over `pool` (every entry counted by [`Buckets::add`]),
    /// in the order `order` (by `key` first): `take(state, entry,
    /// remaining)` returns the tokens it spends of `remaining` (0 to pass
    /// over it); `keep(state, entry, remaining)` says whether an entry not
    /// yet offered can still be taken, giving its tokens (`tokens(entry)`)
    /// when it can. Returns with the pool empty and so the buckets too,
    /// ready for the next pool; the result is how many entries it ordered.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run<C: Copy, S>(
        &mut self,
        pool: &mut Vec<C>,
        remaining: &mut i64,
        state: &mut S,
        key: impl Fn(&C) -> u64,
        order: impl Fn(&C, &C) -> Ordering,
        take: impl Fn(&mut S, &C, i64) -> i64,
        keep: impl Fn(&S, &C, i64) -> Option<i64>,
    ) -> usize {
        let mut sorted = 0;
        let mut round = FIRST_ROUND;
        while !pool.is_empty() {
            // A pool of at most twice the tokens left is mostly taken:
            // ordered at once (a second round would bucket and order its
            // rest again).
            let cut = if self.total <= remaining.saturating_mul(2) {
                self.counts.len()
            } else {
                cut_after(&self.counts, &self.sums, round.min(pool.len()), *remaining)
            };
            // Buckets 0..=last, and how many entries they hold.
            let last = cut.min(self.counts.len() - 1);
            let head_len: usize = self.counts[..=last].iter().sum();
            let mid = if head_len < SCATTER_MIN {
                // Rest to the front, head (buckets <= cut) to the back,
                // ordered.
                let (base, shift) = (self.base, self.shift);
                let mid = partition(pool, |p| ((key(p) - base) >> shift) as usize > cut);
                pool[mid..].sort_unstable_by(|a, b| order(a, b));
                mid
            } else {
                self.scatter(pool, last, head_len, &key, &order)
            };
            // The cut bucket has entries (or is past the last): every
            // round orders at least one, so the loop ends.
            debug_assert!(
                mid < pool.len(),
                "an empty head: cut {cut}, pool {}",
                pool.len()
            );
            sorted += pool.len() - mid;
            let mut left = *remaining;
            for p in &pool[mid..] {
                left -= take(state, p, left);
            }
            *remaining = left;
            pool.truncate(mid);
            round = round.saturating_mul(2);
            // Drop what can no longer be taken and bucket the rest, in one
            // pass.
            let (counts, sums) = (&mut self.counts, &mut self.sums);
            counts.fill(0);
            sums.fill(0);
            let (base, shift, left) = (self.base, self.shift, *remaining);
            let mut total = 0i64;
            pool.retain(|p| {
                let Some(t) = keep(state, p, left) else {
                    return false;
                };
                let b = ((key(p) - base) >> shift) as usize;
                counts[b] += 1;
                sums[b] = sums[b].saturating_add(t);
                total = total.saturating_add(t);
                true
            });
            self.total = total;
        }
        sorted
    }

    /// [`Buckets::run`]'s head of `head_len` entries (buckets `0..=last`)
    /// to the back of `pool` in order, the rest to the front: the head
    /// placed bucket by bucket from the counts, then each bucket ordered
    /// (a few entries each). Returns where the head starts.
    fn scatter<C: Copy>(
        &mut self,
        pool: &mut Vec<C>,
        last: usize,
        head_len: usize,
        key: &impl Fn(&C) -> u64,
        order: &impl Fn(&C, &C) -> Ordering,
    ) -> usize {
        let mut end = std::mem::take(&mut self.end);
        end.clear();
        let mut at = 0;
        for &c in &self.counts[..=last] {
            end.push(at);
            at += c;
        }
        // Buckets 0..=last hold exactly `head_len` entries of the pool (the
        // counts count the pool): the head is placed past the pool's end,
        // each slot written once, while the rest moves to the front.
        let len = pool.len();
        pool.resize(len + head_len, pool[0]);
        let mut rest = 0;
        for i in 0..len {
            let p = pool[i];
            let b = self.bucket(key(&p));
            if b > last {
                pool[rest] = p;
                rest += 1;
            } else {
                pool[len + end[b]] = p;
                end[b] += 1;
            }
        }
        let head = &mut pool[len..];
        // One insertion pass over the whole head, whose entries only move
        // within their buckets (a loop over the buckets would branch on each
        // one's size); large buckets sorted first.
        sort_large(head, &end, order);
        insertion_sort(head, order);
        pool.copy_within(len.., rest);
        pool.truncate(rest + head_len);
        self.end = end;
        rest
    }
}

/// Sorts, by `order`, the buckets of `head` (bucket `b` ends at `end[b]`)
/// that hold more than [`SMALL_BUCKET`] entries: what bounds the insertion
/// pass's work (it orders the head whichever are sorted).
fn sort_large<C: Copy>(head: &mut [C], end: &[usize], order: &impl Fn(&C, &C) -> Ordering) {
    let mut start = 0;
    for &e in end {
        if e - start > SMALL_BUCKET {
            head[start..e].sort_unstable_by(|a, b| order(a, b));
        }
        start = e;
    }
}

/// Sorts a few entries by `order`.
#[inline]
fn insertion_sort<C: Copy>(v: &mut [C], order: &impl Fn(&C, &C) -> Ordering) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && order(&x, &v[j - 1]) == Ordering::Less {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Buckets of more entries than this are sorted on their own.
const SMALL_BUCKET: usize = 16;

/// A head of at least this many entries is placed by bucket, then ordered
/// bucket by bucket ([`Buckets::scatter`]); a smaller one is ordered whole.
const SCATTER_MIN: usize = 2048;

/// How many top bits of the density key pick a candidate's bucket: about
/// one bucket per candidate, between 16 and 65,536 buckets.
fn bucket_bits(n: usize) -> u32 {
    (usize::BITS - n.leading_zeros()).clamp(4, 16)
}

/// The last bucket of a round's head: the first bucket `b` such that
/// buckets `0..=b` hold at least `need` candidates and `remaining` tokens;
/// `counts.len()` (every bucket) when there is none.
fn cut_after(counts: &[usize], sums: &[i64], need: usize, remaining: i64) -> usize {
    let (mut count, mut sum) = (0, 0i64);
    for (b, (&c, &s)) in counts.iter().zip(sums).enumerate() {
        count += c;
        sum = sum.saturating_add(s);
        if count >= need && sum >= remaining {
            return b;
        }
    }
    counts.len()
}

/// Moves the elements satisfying `front` before the others; returns their
/// count. Order within each side is not kept.
fn partition<T>(v: &mut [T], front: impl Fn(&T) -> bool) -> usize {
    let mut mid = 0;
    for i in 0..v.len() {
        if front(&v[i]) {
            v.swap(mid, i);
            mid += 1;
        }
    }
    mid
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::Items;

    fn items(spec: &[(i64, f64)]) -> (Items, Vec<u32>) {
        let spec: Vec<_> = spec.iter().map(|&(t, s)| (t, s, "Message")).collect();
        let it = Items::from_spec(&spec);
        // What the pipeline hands a slicer: the Sort stage's order.
        let sorted = crate::sort::sort_stage(&it.view());
        (it, sorted)
    }

    // Edge-case table of spec 000.
    #[test]
    fn empty_input_gives_empty() {
        let (it, c) = items(&[]);
        assert!(greedy(&it.view(), &c, 100).is_empty());
    }

    #[test]
    fn non_positive_target_gives_empty() {
        let (it, c) = items(&[(0, 0.5), (10, 0.5)]);
        assert!(greedy(&it.view(), &c, 0).is_empty());
        assert!(greedy(&it.view(), &c, -5).is_empty());
    }

    #[test]
    fn all_zero_token_items_are_selected_in_input_order() {
        // The slicer's input is in Sort-stage order: 1 (0.9), 2 (0.5), 0 (0.1).
        let (it, c) = items(&[(0, 0.1), (0, 0.9), (0, 0.5), (0, 0.5)]);
        assert_eq!(greedy(&it.view(), &c, 1), vec![1, 2, 3, 0]);
    }

    #[test]
    fn single_item_fits_or_not() {
        let (it, c) = items(&[(50, 0.5)]);
        assert_eq!(greedy(&it.view(), &c, 50), vec![0]);
        assert!(greedy(&it.view(), &c, 49).is_empty());
    }

    #[test]
    fn all_items_exceed_budget_only_zero_token_selected() {
        let (it, c) = items(&[(100, 0.9), (0, 0.1), (200, 0.8)]);
        assert_eq!(greedy(&it.view(), &c, 50), vec![1]);
    }

    #[test]
    fn all_items_fit() {
        let (it, c) = items(&[(10, 0.9), (20, 0.8), (30, 0.1)]);
        let mut got = greedy(&it.view(), &c, 60);
        got.sort();
        assert_eq!(got, vec![0, 1, 2]);
    }

    #[test]
    fn equal_density_ties_by_input_position() {
        // Sort-stage order 3 (2.0), 0 (1.0), 5 (1.0), 2, 1: among the 0.5
        // densities 3 comes first, then 0 before 5 (equal scores: index).
        let (it, c) = items(&[(2, 1.0), (1, 0.1), (1, 0.2), (4, 2.0), (9, 0.0), (2, 1.0)]);
        assert_eq!(greedy(&it.view(), &c, 100), vec![3, 0, 5, 2, 1, 4]);
    }

    #[test]
    fn item_order_and_sort_stage_order_give_the_same_output() {
        // Equal densities (0.1/token) with different scores and positions.
        let (it, c) = items(&[(1, 0.1), (5, 0.5), (2, 0.2), (5, 0.5), (0, 0.3), (3, 0.9)]);
        let sorted = crate::sort::sort_stage(&it.view());
        assert_eq!(greedy(&it.view(), &c, 8), greedy(&it.view(), &sorted, 8));
        assert_eq!(greedy(&it.view(), &c, 8), vec![4, 5, 1]);
    }

    #[test]
    fn rounds_give_the_full_sort_order() {
        // More candidates than one round, all fitting: the output must be
        // the whole density order.
        let spec: Vec<(i64, f64)> = (0..5000)
            .map(|i| (1 + (i * 7919) % 13, ((i * 104_729) % 1000) as f64 / 1000.0))
            .collect();
        let (it, c) = items(&spec);
        let got = greedy(&it.view(), &c, i64::MAX);
        let mut want: Vec<u32> = c.clone();
        want.sort_by(|&a, &b| {
            let d = |i: u32| it.view().score(i) / it.view().tokens(i) as f64;
            d(b).partial_cmp(&d(a)).unwrap()
        }); // stable: ties keep Sort-stage order
        assert_eq!(got, want);
    }

    /// Seeded candidates for the multi-round tests: tokens 0..2000 (one in
    /// fifty zero), scores in steps of 1/1000 (so densities tie).
    fn random_items(n: usize, seed: u64) -> (Items, Vec<u32>) {
        let mut rng = crate::testing::Rng(seed);
        let spec: Vec<(i64, f64)> = (0..n)
            .map(|_| {
                let t = if rng.chance(2) {
                    0
                } else {
                    1 + rng.below(2000) as i64
                };
                (t, rng.below(1000) as f64 / 1000.0)
            })
            .collect();
        items(&spec)
    }

    /// The spec's single pass, literally: every candidate that fits,
    /// ordered by density (stable: ties keep Sort-stage order), then taken
    /// while it fits.
    fn single_pass(it: &Items, c: &[u32], target: i64) -> Vec<u32> {
        let v = it.view();
        let density = |i: u32| match v.tokens(i) {
            0 => f64::MAX,
            t => v.score(i) / t as f64,
        };
        let mut order: Vec<u32> = c
            .iter()
            .copied()
            .filter(|&i| v.tokens(i) <= target)
            .collect();
        order.sort_by(|&a, &b| density(b).partial_cmp(&density(a)).unwrap());
        let mut remaining = target;
        let mut out = Vec::new();
        for i in order {
            if v.tokens(i) <= remaining {
                remaining -= v.tokens(i);
                out.push(i);
            }
        }
        out
    }

    #[test]
    fn several_rounds_give_the_single_pass_selection_and_order() {
        // Targets from a few items to most of them: heads cut at different
        // buckets, candidates dropped between rounds, several rounds.
        for (n, seed) in [(1500, 1), (5000, 2), (40_000, 3)] {
            let (it, c) = random_items(n, seed);
            for target in [1, 700, 20_000, 300_000, 2_000_000, 30_000_000] {
                let want = single_pass(&it, &c, target);
                assert_eq!(
                    greedy(&it.view(), &c, target),
                    want,
                    "n {n} target {target}"
                );
                // Item order (greedy_all) gives the same output.
                let all = greedy_all(&it.view(), target);
                assert_eq!(all, want, "greedy_all: n {n} target {target}");
            }
        }
    }

    #[test]
    fn rounds_order_only_about_what_can_fit() {
        // 100,000 candidates of ~1,000 tokens, a 128,000-token budget: the
        // ~2,000 zero-token ones and about 130 others fit. The rounds order
        // about 5,100 candidates (the first head holds the zero-token bucket
        // and >= 1,024 candidates); ordering all of them is the cost the
        // rounds exist to avoid.
        let (it, c) = random_items(100_000, 4);
        let (got, sorted, _) = greedy_by(&it.view(), c.len(), |p| c[p as usize], 128_000);
        assert_eq!(got, single_pass(&it, &c, 128_000));
        assert!(
            sorted >= got.len(),
            "ordered {sorted} < selected {}",
            got.len()
        );
        assert!(sorted <= 10_000, "ordered {sorted} of 100,000 candidates");

        // A first round that fills most of the budget with one of 5,000 big,
        // dense candidates and drops the rest of them: the second round
        // must again order a head of the 95,000 small ones, not all (it
        // orders about 7,600 candidates in all).
        let mut rng = crate::testing::Rng(5);
        let spec: Vec<(i64, f64)> = (0..100_000)
            .map(|i| match i % 20 {
                0 => (1000, 0.9),
                _ => (1 + rng.below(3) as i64, (1 + rng.below(400)) as f64 / 1e6),
            })
            .collect();
        let (it, c) = items(&spec);
        let (got, sorted, _) = greedy_by(&it.view(), c.len(), |p| c[p as usize], 1500);
        assert_eq!(got, single_pass(&it, &c, 1500));
        assert!(sorted <= 20_000, "ordered {sorted} of 100,000 candidates");
    }

    #[test]
    fn the_density_split_gives_the_single_pass_selection() {
        // Inputs large enough to be split at a sampled density: the dense
        // pass, then the pass over what is below the split and still fits.
        for (n, seed) in [(PREFILTER_MIN, 6), (50_000, 7)] {
            let (it, c) = random_items(n, seed);
            for target in [1, 150, 5_000, 128_000, 3_000_000, 60_000_000] {
                let want = single_pass(&it, &c, target);
                assert_eq!(
                    greedy(&it.view(), &c, target),
                    want,
                    "n {n} target {target}"
                );
                assert_eq!(
                    greedy_all(&it.view(), target),
                    want,
                    "all: n {n} target {target}"
                );
            }
        }
        // The split is what keeps the work down: at PREFILTER_MIN items and
        // a budget of ~1 % of their tokens, a few percent of the candidates
        // enter a pool (all of them without the split).
        let (it, c) = random_items(PREFILTER_MIN, 8);
        let (got, _, pooled) = greedy_by(&it.view(), c.len(), |p| c[p as usize], 128_000);
        assert_eq!(got, single_pass(&it, &c, 128_000));
        assert!(
            pooled <= PREFILTER_MIN / 8,
            "pooled {pooled} of {PREFILTER_MIN}"
        );
        // One fewer candidate: no split, every fitting candidate pooled.
        let (it, c) = random_items(PREFILTER_MIN - 1, 8);
        let (_, _, pooled) = greedy_by(&it.view(), c.len(), |p| c[p as usize], 128_000);
        assert!(pooled > PREFILTER_MIN / 2, "pooled {pooled}");
    }

    #[test]
    fn what_the_dense_pass_leaves_is_filled_from_below_the_split() {
        // The sampled positions (multiples of n / SAMPLE) hold the densest
        // candidates, 1,000 tokens each: the split falls at their density.
        // They fill 3,000 of 3,500 tokens; the other 500 must come from the
        // small, sparse candidates below the split, in density order.
        let n = PREFILTER_MIN + 5;
        let step = n / SAMPLE;
        let spec: Vec<(i64, f64)> = (0..n)
            .map(|i| match i % step {
                0 => (1000, 1.0),
                _ => (1 + (i % 3) as i64, (1 + i % 97) as f64 / 1e6),
            })
            .collect();
        let (it, c) = items(&spec);
        let want = single_pass(&it, &c, 3_500);
        let got = greedy(&it.view(), &c, 3_500);
        assert_eq!(got, want);
        let small = got.iter().filter(|&&i| it.view().tokens(i) < 1000).count();
        assert!(small > 100, "{small} small candidates taken");
        assert_eq!(greedy_all(&it.view(), 3_500), want);
    }

    #[test]
    fn negative_token_items_are_never_candidates_in_a_split_input() {
        // greedy_all passes over every item: one in ten has negative tokens.
        let n = 30_000;
        let spec: Vec<(i64, f64)> = (0..n)
            .map(|i| match i % 10 {
                0 => (-5, 0.9),
                _ => (1 + (i * 7) % 500, ((i * 31) % 1000) as f64 / 1000.0),
            })
            .collect();
        let (it, _) = items(&spec);
        let v = it.view();
        let cands: Vec<u32> = (0..n as u32).filter(|&i| v.tokens(i) >= 0).collect();
        for target in [40_000, 700_000] {
            let got = greedy_all(&v, target);
            assert!(got.iter().all(|&i| v.tokens(i) >= 0));
            assert_eq!(got, single_pass(&it, &cands, target), "target {target}");
        }
    }

    /// `Buckets::run` orders a pool of at most twice the tokens left in one
    /// round (every entry), a larger one only as far as a head that covers
    /// them; the pass takes the same entries either way.
    #[test]
    fn buckets_order_a_pool_of_at_most_twice_the_tokens_left_at_once() {
        let keys: Vec<u64> = (0..5000u64).map(|i| (i * 7919) % 5003 + 100).collect();
        for (left, all) in [(2500, true), (2499, false)] {
            let mut b = Buckets::default();
            b.reset(keys.len(), 100, 5102);
            let mut pool: Vec<(u64, i64)> = keys.iter().map(|&k| (k, 1)).collect();
            for &(k, t) in &pool {
                b.add(k, t);
            }
            let (mut remaining, mut taken) = (left, Vec::new());
            let sorted = b.run(
                &mut pool,
                &mut remaining,
                &mut taken,
                |c| c.0,
                |a, b| a.0.cmp(&b.0),
                |taken: &mut Vec<u64>, c, left| {
                    (c.1 <= left).then(|| taken.push(c.0)).map_or(0, |()| c.1)
                },
                |_, c, left| (c.1 <= left).then_some(c.1),
            );
            let mut want = keys.clone();
            want.sort_unstable();
            want.truncate(left as usize);
            assert_eq!(taken, want, "left {left}");
            assert_eq!(sorted == keys.len(), all, "left {left}: ordered {sorted}");
            assert!(pool.is_empty());
        }
    }

    #[test]
    fn bucket_bits_gives_about_one_bucket_per_candidate() {
        let cases = [
            (1, 4),
            (15, 4),
            (16, 5),
            (100, 7),
            (1024, 11),
            (2000, 11),
            (65_535, 16),
        ];
        for (n, bits) in cases {
            assert_eq!(bucket_bits(n), bits, "n {n}");
        }
        assert_eq!(bucket_bits(1 << 20), 16);
        assert_eq!(bucket_bits(usize::MAX), 16);
    }

    #[test]
    fn cut_after_needs_both_the_count_and_the_tokens() {
        let counts = [2, 0, 3, 1];
        let sums = [10, 0, 30, 5];
        assert_eq!(cut_after(&counts, &sums, 1, 1), 0);
        assert_eq!(cut_after(&counts, &sums, 2, 10), 0);
        // Count reached at 0, tokens only at 2.
        assert_eq!(cut_after(&counts, &sums, 2, 11), 2);
        // Tokens reached at 2, count only at 3.
        assert_eq!(cut_after(&counts, &sums, 6, 11), 3);
        assert_eq!(cut_after(&counts, &sums, 5, 40), 2);
        // Neither reached: every bucket.
        assert_eq!(cut_after(&counts, &sums, 7, 1), 4);
        assert_eq!(cut_after(&counts, &sums, 1, 46), 4);
        // Saturating sums.
        assert_eq!(cut_after(&[1, 1], &[i64::MAX, 1], 2, i64::MAX), 1);
    }

    #[test]
    fn skipped_items_are_not_deferred() {
        // density order: 0 (0.9/90), 1 (0.5/60), 2 (0.1/30) ; budget 100
        let (it, c) = items(&[(90, 0.9), (60, 0.5), (30, 0.1)]);
        // 0 fits (10 left), 1 skipped, 2 skipped: single pass.
        assert_eq!(greedy(&it.view(), &c, 100), vec![0]);
    }

    #[test]
    fn spec_density_example() {
        // conformance greedy-density: budget 300
        let (it, c) = items(&[(400, 0.9), (100, 0.7), (100, 0.5), (200, 0.1)]);
        assert_eq!(greedy(&it.view(), &c, 300), vec![1, 2]);
    }
}
