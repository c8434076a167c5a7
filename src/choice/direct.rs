//! GreedySlice over a list with variants and no groups, read straight from
//! the item store: what [`super::greedy::greedy`] chooses over the options
//! of the same candidates, without building the options, sorting the
//! candidates or ordering every hull step.
//!
//! The pass over hull steps by efficiency passes over every step whose
//! extra tokens no longer fit, and takes a class's steps only in order; so,
//! as the plain GreedySlice does ([`crate::slicer::greedy`]), a large input
//! is split at an efficiency estimated from a sample: the pass runs over
//! the steps at or above it, then over those below it that still fit what
//! is left. The split's steps hold about 1.1 times the budget; the same
//! scan keeps apart the candidates down to a lower efficiency (a reserve,
//! about twice the budget), so a sample that misleads costs a read of
//! those, not a scan of all. The options of most items are never read: an
//! item's best efficiency is bounded by the store's bound on its steps
//! with the pushed scores ([`Items::peak`], 4 bytes an item read), or by
//! its score and the store's bound on its options' score per token
//! ([`Items::reach`]); its lightest option by its tokens and its variants'
//! lightest; the tokens of its first step by those of the options that
//! keep the most per token ([`Items::lead`], [`crate::items::first_leading`]).
//!
//! Below the split and the reserve, what is left may still fit the lightest
//! option of nearly every item (a list where each has a small
//! placeholder): a scan of the bounds finds the candidates whose first step
//! fits, the 512 of the highest bounds (four times more each scan), and
//! they are read a few at a time, the highest bounds first, the pass
//! running over every step more efficient than the bounds of those still
//! unread or not scanned. One whose first step no longer fits takes no step
//! and is read only if a repair may choose it (Sort-stage order, while its
//! lightest option fits: one scan finds them). Ties are broken by the
//! Sort-stage key, so candidates in item order or in Sort-stage order give
//! the same choice.

use super::greedy::{best_fit, best_up, hull};
use super::Chosen;
use crate::group::saturating_sum;
use crate::items::{Items, View};
use crate::slicer::greedy::{Buckets, SAMPLE_RANK};
use crate::sort::desc_bits;

/// Inputs of at least this many classes are split at an efficiency
/// ([`threshold`]): lower than GreedySlice's own minimum, since a class
/// costs more to read than an item.
const SPLIT_MIN: usize = 2048;

/// Classes in the threshold's sample: one in twenty, between 256 and 1,024
/// (each costs a read of its variants; a larger sample estimates better).
fn sample_size(n: usize) -> usize {
    (n / 20).clamp(256, 1024)
}

/// One hull step in a pool: its efficiency key (ascending = efficiency
/// descending), its extra tokens, its class (an index into [`Classes`];
/// ties are broken by the class's [`Classes::order`]), the step's number
/// in the class and the option it arrives at. 24 bytes: the pass moves
/// every step a few times.
#[derive(Clone, Copy)]
struct Cand {
    key: u64,
    extra: i64,
    class: u32,
    step: u16,
    option: u8,
}

impl Cand {
    /// Step `step` of class `class` of efficiency key `key`, arriving at
    /// option `option`.
    fn at(key: u64, class: u32, (step, option): (u16, usize), extra: i64) -> Cand {
        Cand {
            key,
            extra,
            class,
            step,
            option: option as u8,
        }
    }
}

/// A class the pass or the repairs have read: its candidate position, where
/// its options sit in [`Classes::options`], the option it stands at (when
/// selected), the step it would take next, and whether a step of it was
/// passed over for want of room (so it takes no more).
#[derive(Clone, Copy)]
struct Class {
    pos: u32,
    first: u32,
    count: u16,
    option: u8,
    selected: bool,
    next: u16,
    dead: bool,
    /// For a class read above the split: how many of its steps are at or
    /// above it, and the extra tokens of the one after them (`i64::MAX`
    /// for none); 0 and 0 for one read below.
    dense: u16,
    below: i64,
}

/// The classes read so far, in candidate order (the pass reads them in
/// two scans of the candidates, each in order), with their options
/// (tokens, score) copied once, and the selected ones in the order they
/// were first chosen.
struct Classes {
    list: Vec<Class>,
    options: Vec<(i64, f64)>,
    chosen: Vec<u32>,
}

/// Each class's place in the order of ties ([`Classes::list`]'s order):
/// its Sort key (`desc_bits` of its tie score), then its candidate
/// position. Kept apart from the classes: the pass reads it while it
/// updates them.
type Order = Vec<(u64, u32)>;

impl Classes {
    /// Adds the class at `pos` of an item of `tokens` and `score` with
    /// `variants` (tokens, share) and tie score `tie` to `order`; returns
    /// its index.
    fn add(
        &mut self,
        order: &mut Order,
        (pos, tie): (u32, f64),
        (tokens, score): (i64, f64),
        variants: &[(i64, f64)],
    ) -> u32 {
        order.push((desc_bits(tie), pos));
        let first = self.options.len() as u32;
        push_options(&mut self.options, (tokens, score), variants);
        self.list.push(Class {
            pos,
            first,
            count: (self.options.len() - first as usize) as u16,
            option: 0,
            selected: false,
            next: 0,
            dead: false,
            dense: 0,
            below: 0,
        });
        self.list.len() as u32 - 1
    }

    fn options(&self, c: u32) -> &[(i64, f64)] {
        let k = &self.list[c as usize];
        &self.options[k.first as usize..k.first as usize + k.count as usize]
    }

    /// The step class `c` stands at, unless it takes no more steps.
    fn next(&self, c: u32) -> Option<u16> {
        let k = &self.list[c as usize];
        (!k.dead).then_some(k.next)
    }

    /// Selects class `c` at `option`.
    fn select(&mut self, c: u32, option: u8) {
        let k = &mut self.list[c as usize];
        if !k.selected {
            k.selected = true;
            self.chosen.push(c);
        }
        k.option = option;
    }

    /// The pass meets step `c` with `left` tokens left: the tokens it takes.
    fn take(&mut self, c: &Cand, left: i64) -> i64 {
        if self.next(c.class) != Some(c.step) {
            return 0;
        }
        if c.extra > left {
            self.list[c.class as usize].dead = true;
            return 0;
        }
        self.list[c.class as usize].next = c.step + 1;
        self.select(c.class, c.option);
        c.extra
    }
}

/// The buffers of a call, kept per thread for the next: a large list's
/// buffers would otherwise be fresh memory every call, whose page faults
/// cost as much as the work. Kept only up to [`Scratch::KEEP`] bytes.
#[derive(Default)]
struct Scratch {
    list: Vec<Class>,
    options: Vec<(i64, f64)>,
    chosen: Vec<u32>,
    pool: Vec<Cand>,
    later: Vec<Cand>,
    order: Order,
    unread: Vec<Unread>,
    spare: Vec<((u64, u32), i64)>,
    dense: Vec<u32>,
    reserve: Vec<u32>,
    found: Vec<(f64, u32)>,
    read_below: Vec<u32>,
    unselected: Vec<u32>,
    buckets: Buckets,
}

#[cfg(test)]
thread_local!(
    /// How many classes this thread's last call read.
    static READ: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Whether it left 12 tokens or more after the split.
    static FALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Hull steps put in the pass's pools and ordered, over all calls.
    static POOLED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    static ORDERED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
);

/// Notes what a call did for the tests: how many classes it read and
/// whether it left room for a placeholder after a split.
#[cfg(test)]
fn note(read: usize, room: i64, split: bool) {
    READ.set(read);
    FALLBACK.set(room >= 12 && split);
}

thread_local!(static SCRATCH: std::cell::Cell<Option<Scratch>> = const { std::cell::Cell::new(None) });

impl Scratch {
    const KEEP: usize = 64 << 20;

    /// This thread's buffers, emptied (new ones the first time).
    fn take() -> Scratch {
        let mut s = SCRATCH.with(|c| c.take()).unwrap_or_default();
        s.list.clear();
        s.options.clear();
        s.chosen.clear();
        s.pool.clear();
        s.later.clear();
        s.order.clear();
        s.unread.clear();
        s.spare.clear();
        s.dense.clear();
        s.reserve.clear();
        s.found.clear();
        s.read_below.clear();
        s.unselected.clear();
        s
    }

    /// Keeps the buffers for this thread's next call, unless they are
    /// large.
    fn keep(self) {
        let bytes = self.list.capacity() * size_of::<Class>()
            + self.options.capacity() * size_of::<(i64, f64)>()
            + (self.pool.capacity() + self.later.capacity()) * size_of::<Cand>()
            + self.unread.capacity() * size_of::<Unread>()
            + self.spare.capacity() * size_of::<((u64, u32), i64)>()
            + self.order.capacity() * size_of::<(u64, u32)>()
            + (self.chosen.capacity() + self.unselected.capacity()) * 4
            + (self.dense.capacity() + self.reserve.capacity()) * 4
            + self.read_below.capacity() * 4
            + self.found.capacity() * size_of::<(f64, u32)>();
        if bytes <= Self::KEEP {
            SCRATCH.with(|c| c.set(Some(self)));
        }
    }
}

/// GREEDY-SLICE over the items of `all` with variants and no groups, by
/// `view` (the scores the slice reads), the candidates being the items of
/// `sorted` or, for none, every item in item order (negative-token items
/// are passed over), with `target` tokens: the chosen items in the order
/// they were first chosen, with the variant each takes. The same as
/// [`super::greedy::greedy`] over the options of the candidates in
/// Sort-stage order.
pub fn greedy(all: &Items, view: &View<'_>, sorted: Option<&[u32]>, target: i64) -> Vec<Chosen> {
    match sorted {
        None => choose(all, view, (all.len(), |p| p), true, target),
        Some(sorted) => choose(
            all,
            view,
            (sorted.len(), |p| sorted[p as usize]),
            false,
            target,
        ),
    }
}

/// [`greedy`], candidate `pos` of `n` being item `item(pos)`; `in_order`
/// when that is `pos` (the scans then read the store's bounds as a
/// column, [`Scan`]).
fn choose(
    all: &Items,
    view: &View<'_>,
    (n, item): (usize, impl Fn(u32) -> u32),
    in_order: bool,
    target: i64,
) -> Vec<Chosen> {
    if n == 0 || target <= 0 {
        return Vec::new();
    }
    let ties = view.ties();
    let options = |m: u32, buf: &mut Vec<(i64, f64)>| {
        buf.clear();
        let item = (view.tokens(m), view.score(m));
        push_options(buf, item, all.variant_shares(m));
    };
    let mut buf: Vec<(i64, f64)> = Vec::new();
    let split = threshold(n, &item, target, &mut |m, f| {
        if view.tokens(m) >= 0 {
            options(m, &mut buf);
            hull(&buf, target, f);
        }
    });
    let tau = split.map_or(u64::MAX, |s| s.key);
    let mut scratch = Scratch::take();
    let mut classes = Classes {
        list: std::mem::take(&mut scratch.list),
        options: std::mem::take(&mut scratch.options),
        chosen: std::mem::take(&mut scratch.chosen),
    };
    let mut pool = std::mem::take(&mut scratch.pool);
    let mut order = std::mem::take(&mut scratch.order);
    let mut left = target;
    // The pass over a pool, bucketed over the keys it holds (efficiencies
    // gather in a few binades: buckets over all keys would hold most of a
    // pool in a few).
    let mut buckets = std::mem::take(&mut scratch.buckets);
    let pass = |buckets: &mut Buckets,
                pool: &mut Vec<Cand>,
                classes: &mut Classes,
                order: &Order,
                left: &mut i64| {
        let lo = pool.iter().map(|c| c.key).min().unwrap_or(0);
        let hi = pool.iter().map(|c| c.key).max().unwrap_or(0);
        buckets.reset(pool.len(), lo, hi);
        for c in pool.iter() {
            buckets.add(c.key, c.extra);
        }
        #[cfg(test)]
        POOLED.set(POOLED.get() + pool.len());
        let _ordered = buckets.run(
            pool,
            left,
            classes,
            |c| c.key,
            |a, b| {
                (a.key.cmp(&b.key)).then_with(|| {
                    (order[a.class as usize].cmp(&order[b.class as usize]))
                        .then(a.step.cmp(&b.step))
                })
            },
            |classes, c, left| classes.take(c, left),
            |classes, c, left| {
                (c.extra <= left && classes.next(c.class).is_some()).then_some(c.extra)
            },
        );
        #[cfg(test)]
        ORDERED.set(ORDERED.get() + _ordered);
    };
    // The steps at or above the split (every step when there is none): a
    // class's steps go down in efficiency, so its first steps. The classes
    // that may have one are found first, then their options read in one
    // go (each read is a cache miss; independent reads overlap), then their
    // steps found.
    let mut dense = std::mem::take(&mut scratch.dense);
    // Candidates between the split and the reserve's efficiency, read only
    // when what the pass leaves still fits them.
    let mut reserve = std::mem::take(&mut scratch.reserve);
    // No candidate has an option lighter than this (for the scans below).
    let fewest = all.fewest_tokens();
    // A bound on the efficiency of item `m`'s steps: with the pushed
    // scores, the store's ([`Items::peak`]); else from its score and the
    // store's bound on its options ([`reach_bound`]).
    let pushed = all.scores_pushed(view);
    let by_peak = |m: u32| f64::from(all.peak(m));
    let by_score = |m: u32| reach_bound(view.score(m), all.reach(m));
    let bound = |m: u32| match pushed {
        true => by_peak(m),
        false => by_score(m),
    };
    // The scans over those bounds (the first read as a column when it is
    // one).
    let by_peaks = Scan {
        n,
        item: &item,
        bound: by_peak,
        column: if in_order { all.peaks() } else { &[] },
        leads: all.leads(),
    };
    let by_scores = Scan {
        n,
        item: &item,
        bound: by_score,
        column: &[],
        leads: &[],
    };
    match split {
        // The store's bounds alone (and the scores when they are not the
        // pushed ones); one loop each, the bound inlined.
        Some(split) => {
            let low = split.reserve.map_or(f64::INFINITY, |(_, e)| e);
            let bands = (split.efficiency, low, &mut dense, &mut reserve);
            match pushed {
                true => split_scan(&by_peaks, bands),
                false => split_scan(&by_scores, bands),
            }
        }
        None => dense.extend(0..n as u32),
    }
    classes.list.reserve(dense.len());
    classes.options.reserve(3 * dense.len());
    pool.reserve(2 * dense.len());
    order.reserve(dense.len());
    // Reads candidate `pos` as a class: its index.
    let read = |classes: &mut Classes, order: &mut Order, pos: u32| {
        let m = item(pos);
        let item = (view.tokens(m), view.score(m));
        classes.add(order, (pos, ties[m as usize]), item, all.variant_shares(m))
    };
    for &pos in &dense {
        // (Negative-token items are never candidates.)
        if view.tokens(item(pos)) >= 0 {
            read(&mut classes, &mut order, pos);
        }
    }
    for c in 0..classes.list.len() as u32 {
        let Classes { list, options, .. } = &mut classes;
        let k = &mut list[c as usize];
        let opts = &options[k.first as usize..k.first as usize + k.count as usize];
        k.below = i64::MAX;
        hull(opts, target, |step, efficiency, extra, o| {
            let key = desc_bits(efficiency);
            if key > tau {
                k.below = extra;
                return false;
            }
            k.dense = step + 1;
            pool.push(Cand::at(key, c, (step, o), extra));
            true
        });
    }
    pass(&mut buckets, &mut pool, &mut classes, &order, &mut left);
    // Below the split, the steps that still fit (of classes that may still
    // take them); and every unselected class whose lightest option fits,
    // for the repairs. First the classes read above, then the others, a
    // few at a time.
    let room = left;
    // Pools the steps of class `c` below the split that may still be
    // taken: from the one it stands at, while they fit.
    let below = |classes: &mut Classes, c: u32, pool: &mut Vec<Cand>| {
        let k = &classes.list[c as usize];
        let next = k.next;
        // A class read above stands at its first step below the split, or
        // takes no more; that step's extra tokens are known.
        if split.is_none() || k.dead || next != k.dense || k.below > room {
            return;
        }
        hull(classes.options(c), target, |step, efficiency, extra, o| {
            let key = desc_bits(efficiency);
            if step < next || (key <= tau && step > next) {
                // Taken, or met before the step it needs (never taken).
                return true;
            }
            // The step it stands at was passed over above the split, or
            // this one and all after it will not fit.
            if key <= tau || extra > room {
                return false;
            }
            pool.push(Cand::at(key, c, (step, o), extra));
            true
        });
    };
    let mut unselected = std::mem::take(&mut scratch.unselected);
    let above = classes.list.len();
    for c in 0..above as u32 {
        let k = &classes.list[c as usize];
        if !k.selected {
            let m = item(k.pos);
            if lightest(all, m, view.tokens(m)) > room {
                continue;
            }
            unselected.push(c);
        }
        below(&mut classes, c, &mut pool);
    }
    // The other candidates whose lightest option fits, with a bound on
    // their steps' efficiency (as a key: none of their steps comes before
    // it), read in rounds, the highest bounds first: every step more
    // efficient than the bounds of those still unread is pooled, so the
    // pass runs over those, and what it leaves decides which still fit.
    // One whose first step no longer fits takes no step: it is left to the
    // repairs, unread (`spare`). Usually a round or two: the rest no longer
    // fit (a list whose items all have a small placeholder would otherwise
    // have each one read).
    let mut unread = std::mem::take(&mut scratch.unread);
    // Candidate `pos` unread, when its lightest option fits `room`.
    let unread_at = |pos: u32, room: i64, unread: &mut Vec<Unread>| {
        let m = item(pos);
        let (t, s) = (view.tokens(m), view.score(m));
        let light = lightest(all, m, t);
        if !light_fits(t, light, room) {
            return;
        }
        // (No step takes fewer tokens than the lightest option.)
        let first = first_step(all, m, t, s, target).max(light);
        let key = bound_key(all, m, t, s);
        unread.push(Unread { key, pos, first });
    };
    // The candidates below `high` (an efficiency) that may take a step
    // with `room` left (their first step fits), the `k` of them of the
    // highest bounds (with ties), to `unread`: a scan of the bounds, the
    // others read only while they may be among those. Returns the bound
    // below which candidates were left (-infinity: none).
    let mut found = std::mem::take(&mut scratch.found);
    let mut stream = |high: f64, k: usize, room: i64, unread: &mut Vec<Unread>| {
        // Whether the candidate of item `m` may take a step with `room`
        // left. With the pushed scores, the store's bound on its first
        // step decides when all its options fit (the first step then
        // takes the fewest tokens it says, no fewer than the lightest
        // option's); else its own bounds.
        let fits = |m: u32| {
            let lead = if pushed { all.lead(m) } else { (0, u16::MAX) };
            may_step(lead, target, room, || {
                first_fits(all, view, m, (room, target))
            })
        };
        let cut = match pushed {
            true => highest(
                (&by_peaks, high, k),
                (Some((room, target)), fits),
                &mut found,
            ),
            false => highest((&by_scores, high, k), (None, fits), &mut found),
        };
        for &(_, pos) in found.iter() {
            unread_at(pos, room, unread);
        }
        cut
    };
    // Candidates below `high` are not scanned yet: the first key any of
    // their steps may have (`floor`); steps at or after it wait for them.
    let mut high = split.map_or(f64::NEG_INFINITY, |s| {
        s.reserve.map_or(s.efficiency, |r| r.1)
    });
    let mut floor = split.map(|_| desc_bits(high));
    for &pos in &reserve {
        unread_at(pos, room, &mut unread);
    }
    // Candidates each scan below looks for (four times more each time).
    let mut batch = FIRST_SCAN;
    // Those read below the split (for the repairs' scan).
    let mut read_below = std::mem::take(&mut scratch.read_below);
    let mut later = std::mem::take(&mut scratch.later);
    let mut round = FIRST_READ;
    loop {
        // How many may still take a step (their first step fits: so does
        // their lightest option); those first, by key: the first `take`
        // read.
        let fits = left;
        let capable = unread.iter().filter(|u| u.first <= fits).count();
        let take = round.min(capable);
        if take < unread.len() {
            // (Any order among equal keys: a step of that key waits.)
            let key = |u: &Unread| if u.first > fits { u64::MAX } else { u.key };
            unread.select_nth_unstable_by_key(take, key);
        }
        for u in &unread[..take] {
            read_below.push(u.pos);
            let c = read(&mut classes, &mut order, u.pos);
            unselected.push(c);
            below(&mut classes, c, &mut pool);
        }
        // The first key any step of a class still unread may have: steps
        // at or after it wait for them.
        let wait = match ((take < capable).then(|| unread[take].key), floor) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        unread.drain(..take);
        pool.retain(|c| {
            if waits(c.key, wait) {
                later.push(*c);
            }
            !waits(c.key, wait)
        });
        pass(&mut buckets, &mut pool, &mut classes, &order, &mut left);
        std::mem::swap(&mut pool, &mut later);
        if take == capable {
            if floor.is_none() {
                // (Nothing waits.)
                debug_assert!(pool.is_empty());
                break;
            }
            // Those scanned are read (or no longer fit): the next below,
            // while any option may fit; the steps that waited for them go
            // on in the next rounds.
            if left >= fewest {
                high = stream(high, batch, left, &mut unread);
                batch = batch.saturating_mul(4);
            }
            floor = (left >= fewest && high > f64::NEG_INFINITY).then(|| desc_bits(high));
            continue;
        }
        round = round.saturating_mul(2);
    }
    // Those not read take no step: the repairs may still choose one whose
    // lightest option fits (a scan, when any option may fit).
    let mut spare = std::mem::take(&mut scratch.spare);
    unread.clear();
    if let Some(split) = split.filter(|_| left >= fewest) {
        read_below.sort_unstable();
        let mut read = read_below.iter().copied().peekable();
        for pos in 0..n as u32 {
            let m = item(pos);
            if read.next_if_eq(&pos).is_some() || bound(m) >= split.efficiency {
                continue;
            }
            let t = view.tokens(m);
            let light = lightest(all, m, t);
            if t >= 0 && light <= left {
                spare.push(((desc_bits(ties[m as usize]), pos), light));
            }
        }
    }
    // The repairs' first sweep: unselected classes in Sort-stage order take
    // their best option that fits. The classes read, and those left unread
    // (`spare`) in rounds, the first in Sort-stage order first, each read
    // only when its lightest option still fits (usually a few).
    unselected.retain(|&c| !classes.list[c as usize].selected);
    unselected.sort_unstable_by_key(|&c| order[c as usize]);
    let repair = |classes: &mut Classes, c: u32, left: &mut i64| {
        if let Some(o) = best_fit(classes.options(c), *left) {
            *left -= classes.options(c)[o].0;
            classes.select(c, o as u8);
            classes.list[c as usize].dead = true;
        }
    };
    let (mut next, mut round) = (0, FIRST_READ);
    loop {
        let fits = left;
        spare.retain(|&(_, light)| light <= fits);
        let take = round.min(spare.len());
        if take < spare.len() {
            spare.select_nth_unstable_by_key(take, |e| e.0);
        }
        spare[..take].sort_unstable_by_key(|e| e.0);
        // Up to the first of those left: all of them when none are.
        let upto = spare.get(take).map_or((u64::MAX, u32::MAX), |e| e.0);
        // The read ones before `key`.
        let mut earlier = |classes: &mut Classes, left: &mut i64, order: &Order, key| {
            while let Some(&c) = unselected.get(next).filter(|&&c| before(order, c, key)) {
                repair(classes, c, left);
                next += 1;
            }
        };
        for &((tie, pos), light) in &spare[..take] {
            earlier(&mut classes, &mut left, &order, (tie, pos));
            if light <= left {
                let c = read(&mut classes, &mut order, pos);
                repair(&mut classes, c, &mut left);
            }
        }
        earlier(&mut classes, &mut left, &order, upto);
        spare.drain(..take);
        if spare.is_empty() && next == unselected.len() {
            break;
        }
        round = round.saturating_mul(2);
    }
    // Then the repairs until neither changes anything: unselected classes
    // in Sort-stage order take their best option that fits (none will: what
    // is left only shrinks); selected ones move up to their best option of
    // a higher score that fits.
    loop {
        let mut changed = false;
        for &c in &unselected {
            if classes.list[c as usize].selected {
                continue;
            }
            if let Some(o) = best_fit(classes.options(c), left) {
                left -= classes.options(c)[o].0;
                classes.select(c, o as u8);
                classes.list[c as usize].dead = true;
                changed = true;
            }
        }
        for k in 0..classes.chosen.len() {
            let c = classes.chosen[k];
            let cur = classes.list[c as usize].option as usize;
            let opts = classes.options(c);
            if let Some(o) = best_up(opts, cur, left) {
                left -= opts[o].0 - opts[cur].0;
                classes.list[c as usize].option = o as u8;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let chosen = classes
        .chosen
        .iter()
        .map(|&c| {
            let k = &classes.list[c as usize];
            Chosen {
                item: item(k.pos),
                variant: k.option,
                tokens: classes.options(c)[k.option as usize].0,
            }
        })
        .collect();
    #[cfg(test)]
    note(classes.list.len(), room, split.is_some());
    Scratch {
        list: classes.list,
        options: classes.options,
        chosen: classes.chosen,
        pool,
        later,
        order,
        unread,
        spare,
        dense,
        reserve,
        found,
        read_below,
        unselected,
        buckets,
    }
    .keep();
    chosen
}

/// Appends the options (tokens, score) of an item of `tokens` and
/// `score` with `variants` (tokens, share): the item as pushed, then each
/// variant at its share of the score; none for a zero-token item, which is
/// always included as pushed.
fn push_options(out: &mut Vec<(i64, f64)>, (tokens, score): (i64, f64), variants: &[(i64, f64)]) {
    out.push((tokens, score));
    if tokens != 0 {
        let shares = variants.iter();
        out.extend(shares.map(|&(t, share)| (t, saturating_sum(0.0, score * share))));
    }
}

/// A candidate below the split not read yet: the bound on its steps'
/// efficiency ([`bound_key`]), its position, its lightest option's tokens
/// and the fewest tokens its first step may take ([`first_step`], at least
/// the lightest option's).
#[derive(Clone, Copy)]
struct Unread {
    key: u64,
    pos: u32,
    first: i64,
}

/// The fewest tokens the first hull step of item `m` (`t` tokens, score
/// `s`) may take, from the item store's bounds: the fewest of the options
/// that keep the largest share of the score per token (within the
/// allowance for rounding), when all of those fit `target` (else the first
/// step may be another option: 0, unknown). `i64::MAX` when it has no
/// step (no score). Scores too small for the allowance: 0.
fn first_step(all: &Items, m: u32, t: i64, s: f64, target: i64) -> i64 {
    let (fewest, most) = all.first_bounds(m, t, s);
    if most <= target {
        fewest
    } else {
        0
    }
}

/// The candidates of `scan` whose bound is below `high` and that
/// `fits(item)` (of those [`Scan::gather`] finds with `fit`), the `k` of
/// them of the highest bounds (with ties), to
/// `found` as (bound, position): a scan of the bounds, the others checked
/// only while they may be among those. Returns the bound below which
/// candidates were left (-infinity: none).
#[inline]
fn highest<I: Fn(u32) -> u32, B: Fn(u32) -> f64>(
    (scan, high, k): (&Scan<'_, I, B>, f64, usize),
    (fit, fits): (Option<(i64, i64)>, impl Fn(u32) -> bool),
    found: &mut Vec<(f64, u32)>,
) -> f64 {
    found.clear();
    let (mut least, mut limit) = (f64::NEG_INFINITY, prune_at(0, k));
    let mut hits = [0u32; CHUNK];
    for start in (0..scan.n as u32).step_by(CHUNK) {
        let count = scan.gather(start, &mut hits, (least, Some(high)), fit);
        // Those whose first step fits (mostly decided without a branch).
        let mut kept = 0;
        for i in 0..count {
            let pos = hits[i];
            hits[kept] = pos;
            kept += usize::from(fits((scan.item)(pos)));
        }
        found.extend(hits[..kept].iter().map(|&pos| (scan.bound_at(pos), pos)));
        if found.len() >= limit {
            least = keep_highest(found, k);
            limit = prune_at(found.len(), k);
        }
    }
    // Those below `least` were left on the way (none when it is still
    // -infinity).
    match found.len() > k {
        true => keep_highest(found, k),
        false => least,
    }
}

/// Whether a candidate may take a step with `room` left (of `target`):
/// by the store's bound on its first step (`lo` or more tokens, when all
/// the options it may take, at most `hi`, fit the target: [`Items::lead`])
/// or else by `exact()`.
#[inline]
fn may_step((lo, hi): (u16, u16), target: i64, room: i64, exact: impl FnOnce() -> bool) -> bool {
    if hi != u16::MAX && i64::from(hi) <= target {
        i64::from(lo) <= room
    } else {
        exact()
    }
}

/// Whether the first hull step of item `m` may fit `room` (of `target`),
/// by its own bounds: its lightest option fits and the fewest tokens
/// [`first_step`] allows do.
#[inline(never)]
fn first_fits(all: &Items, view: &View<'_>, m: u32, (room, target): (i64, i64)) -> bool {
    let (t, s) = (view.tokens(m), view.score(m));
    let light = lightest(all, m, t);
    light_fits(t, light, room) && first_step(all, m, t, s, target).max(light) <= room
}

/// The tokens of the lightest option of item `m` of `t` tokens (0 for a
/// zero-token item, which takes no variant).
#[inline]
fn lightest(all: &Items, m: u32, t: i64) -> i64 {
    match t {
        0 => 0,
        t => t.min(all.variant_lightest(m)),
    }
}

/// Whether a candidate of `t` tokens whose lightest option takes `light`
/// may still be chosen with `room` left (a negative count never is).
#[inline]
fn light_fits(t: i64, light: i64, room: i64) -> bool {
    t >= 0 && light <= room
}

/// Candidates the first scan below the split and the reserve looks for
/// (each later one four times more).
const FIRST_SCAN: usize = 2 * FIRST_READ;

/// The length at which [`highest`], holding `len` entries after keeping
/// the `k` highest, keeps the highest again: twice as many, so each entry
/// is kept at most a few times. Only when it prunes: any length above `k`
/// keeps the same entries.
#[inline]
fn prune_at(len: usize, k: usize) -> usize {
    2 * len.max(k)
}

/// Keeps the `k` entries of `found` (`k` < its length) of the highest
/// bounds, and those equal to the lowest of them; returns that bound.
fn keep_highest(found: &mut Vec<(f64, u32)>, k: usize) -> f64 {
    found.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0));
    let least = found[k - 1].0;
    found.retain(|e| e.0 >= least);
    least
}

/// Candidates below the split read in the first round of the repairs'
/// reads; doubled every round.
const FIRST_READ: usize = 256;

/// No hull step of item `m` (`t` tokens, score `s`) comes before this key
/// (a bound on its steps' efficiency, as [`may_reach`] allows for
/// rounding); `u64::MAX` when it has no step (no score).
fn bound_key(all: &Items, m: u32, t: i64, s: f64) -> u64 {
    if s.is_nan() || s <= 0.0 {
        return u64::MAX;
    }
    let own = match t {
        0 => f64::INFINITY,
        t => s / (t as f64 * (1.0 - 1e-9)),
    };
    desc_bits(own.max(s * all.variant_share_per_token(m) * (1.0 + 1e-9)))
}

/// Whether class `c` comes before the candidate of Sort-stage key and
/// position `key` in the repairs' order (never equal: a position each).
#[inline]
fn before(order: &Order, c: u32, key: (u64, u32)) -> bool {
    order[c as usize] < key
}

/// Whether a pooled step of `key` waits for the classes still unread, the
/// first key any of their steps may have being `wait` (none: it does
/// not).
#[inline]
fn waits(key: u64, wait: Option<u64>) -> bool {
    wait.is_some_and(|wait| key >= wait)
}

/// A bound on the efficiency of every hull step of an item of score `s`
/// and reach `reach` ([`Items::reach`]: a bound on the score per token of
/// its options, per unit of its score, rounded up): its options' scores
/// are `s` times their shares, rounded, and a step's efficiency is at most
/// its first's, up to rounding, so the bound allows a little more. No
/// option scores above nothing when s <= 0: no steps, -infinity.
#[inline]
fn reach_bound(s: f64, reach: f32) -> f64 {
    match s > 0.0 {
        true => s * f64::from(reach) * (1.0 + 1e-9),
        false => f64::NEG_INFINITY,
    }
}

/// Whether an item of score `s` and reach `reach` may have a hull step of
/// `efficiency` or more ([`reach_bound`]).
#[cfg(test)]
fn may_reach(s: f64, reach: f32, efficiency: f64) -> bool {
    reach_bound(s, reach) >= efficiency
}

/// The scan that splits: the candidates of `scan` whose bound (a bound
/// on their steps' efficiency) reaches `high` to `dense`, those that reach
/// `low` else to `reserve`, by position.
#[inline]
fn split_scan<I: Fn(u32) -> u32, B: Fn(u32) -> f64>(
    scan: &Scan<'_, I, B>,
    (high, low, dense, reserve): (f64, f64, &mut Vec<u32>, &mut Vec<u32>),
) {
    let mut hits = [0u32; CHUNK];
    let (mut above, mut between) = ([0u32; CHUNK], [0u32; CHUNK]);
    for start in (0..scan.n as u32).step_by(CHUNK) {
        let count = scan.gather(start, &mut hits, (high.min(low), None), None);
        // (Without a branch: a quarter of them may be in the reserve.)
        let (mut a, mut b) = (0, 0);
        for &pos in &hits[..count] {
            let dense = scan.bound_at(pos) >= high;
            above[a % CHUNK] = pos;
            between[b % CHUNK] = pos;
            a += usize::from(dense);
            b += usize::from(!dense);
        }
        dense.extend_from_slice(&above[..a]);
        reserve.extend_from_slice(&between[..b]);
    }
}

/// What the scans over the candidates read: candidate `pos` of `n` is
/// item `item(pos)`, whose steps' efficiency `bound(item)` bounds; when
/// `column` is not empty, it holds the same bounds by position as `f32`s
/// (the store's [`Items::peaks`] for candidates in item order with the
/// pushed scores), as far as it goes, and the scans read it 16 at a time.
struct Scan<'a, I, B> {
    n: usize,
    item: I,
    bound: B,
    column: &'a [f32],
    /// Beside `column`, the store's bounds on the first step of the same
    /// candidates ([`Items::leads`]), or none.
    leads: &'a [(u16, u16)],
}

impl<I: Fn(u32) -> u32, B: Fn(u32) -> f64> Scan<'_, I, B> {
    /// The bound of candidate `pos`.
    #[inline]
    fn bound_at(&self, pos: u32) -> f64 {
        (self.bound)((self.item)(pos))
    }

    /// The candidates from `start` (the next [`CHUNK`] of them at most)
    /// whose bound is `lo` or more and below `hi` (none: no limit), to the
    /// front of `hits`, in order: their count. With `fit` (room, target)
    /// and the column, only those whose first step may fit `room` by
    /// [`Scan::leads`] (as [`may_step`] decides without asking; the caller
    /// still asks of those gathered). Without a branch on each one's test:
    /// where a few of many are kept, a branch per position is mispredicted
    /// on each one kept, which costs more than the test.
    #[inline]
    fn gather(
        &self,
        start: u32,
        hits: &mut [u32; CHUNK],
        (lo, hi): (f64, Option<f64>),
        fit: Option<(i64, i64)>,
    ) -> usize {
        let range = start as usize..start.saturating_add(CHUNK as u32).min(self.n as u32) as usize;
        // (`f64::from(b) >= x` is `b >= at_least32(x)`, for every `b`.)
        let Some(column) = self.column.get(range.clone()) else {
            let end = range.end as u32;
            return match hi {
                None => gather_each(start..end, hits, |pos| self.bound_at(pos) >= lo),
                Some(hi) => gather_each(start..end, hits, |pos| {
                    let b = self.bound_at(pos);
                    (b >= lo) & (b < hi)
                }),
            };
        };
        let lo = at_least32(lo);
        let Some(hi) = hi.map(at_least32) else {
            return gather16(column, column, start, hits, |b, _| b >= lo);
        };
        match (fit, self.leads.get(range)) {
            (Some((room, target)), Some(leads)) => {
                // Decided not to fit: the most known and within the target,
                // the fewest past the room (in `u16`s: a target past them
                // all is `u16::MAX - 1`, a room past them `u16::MAX`).
                let max = i64::from(u16::MAX);
                let target = target.clamp(0, max - 1) as u16;
                let room = room.clamp(0, max) as u16;
                gather16(column, leads, start, hits, |b, (fewest, most)| {
                    (b >= lo) & (b < hi) & !((most <= target) & (fewest > room))
                })
            }
            _ => gather16(column, column, start, hits, |b, _| (b >= lo) & (b < hi)),
        }
    }
}

/// Positions a scan handles at a time ([`Scan::gather`]).
const CHUNK: usize = 256;

/// The least `f32` whose value is `x` or more (NaN for NaN): `f64::from(b)
/// >= x` exactly when `b >= at_least32(x)`, and `f64::from(b) < x` when
/// `b < at_least32(x)`.
#[inline]
fn at_least32(x: f64) -> f32 {
    let y = x as f32;
    match f64::from(y) < x {
        true => y.next_up(),
        false => y,
    }
}

/// The positions of `range` (at most [`CHUNK`]) that `keep`, to the front
/// of `hits` in order: their count.
#[inline]
fn gather_each(
    range: std::ops::Range<u32>,
    hits: &mut [u32; CHUNK],
    keep: impl Fn(u32) -> bool,
) -> usize {
    let mut count = 0;
    for pos in range {
        hits[count % CHUNK] = pos;
        count += usize::from(keep(pos));
    }
    count
}

/// The positions from `start` of the entries of `a` (at most [`CHUNK`])
/// that `keep` with those of `b` beside them (as long or longer), to the
/// front of `hits` in order: their count. Tested 16 at a time into a mask
/// (compiled to vector compares).
#[inline]
fn gather16<T: Copy, U: Copy>(
    a: &[T],
    b: &[U],
    start: u32,
    hits: &mut [u32; CHUNK],
    keep: impl Fn(T, U) -> bool,
) -> usize {
    let mut count = 0;
    let mut pos = start;
    let (mut xs, mut ys) = (a.chunks_exact(16), b[..a.len()].chunks_exact(16));
    for (x, y) in (&mut xs).zip(&mut ys) {
        let mut mask = 0u32;
        for j in 0..16 {
            mask |= u32::from(keep(x[j], y[j])) << j;
        }
        while mask != 0 {
            hits[count % CHUNK] = pos + mask.trailing_zeros();
            count += 1;
            mask &= mask - 1;
        }
        pos += 16;
    }
    for (&x, &y) in xs.remainder().iter().zip(ys.remainder()) {
        hits[count % CHUNK] = pos;
        count += usize::from(keep(x, y));
        pos += 1;
    }
    count
}

/// How far [`threshold`]'s walk over `len` entries orders them when it
/// reaches the first `ordered` (fewer than `len`): an eighth at first, then
/// twice as far (at least one more, at most all).
fn order_to(ordered: usize, len: usize) -> usize {
    (2 * ordered).max(len / 8).clamp(ordered + 1, len)
}

/// Orders `sample[from..to]` by key, the entries of the least keys of
/// `sample[from..]` (the entries before `from` being ordered and the least).
fn order_next(sample: &mut [(u64, f64, i64)], from: usize, to: usize) {
    if to < sample.len() {
        sample[from..].select_nth_unstable_by_key(to - from, |p| p.0);
    }
    sample[from..to].sort_unstable_by_key(|p| p.0);
}

/// Where [`greedy`] splits a large input: the efficiency (as its key, and
/// itself) above which the pass runs first, and the reserve's, above which
/// candidates are kept apart in the same scan (read only while what the
/// pass leaves fits them; none when the sample never gets there).
#[derive(Clone, Copy)]
struct Split {
    key: u64,
    efficiency: f64,
    reserve: Option<(u64, f64)>,
}

/// The split's hull steps hold about this many times the target's tokens
/// (estimated from the sample); the reserve's, [`RESERVE`]. The pass over
/// the steps above the split orders most of them: the fewer, the faster,
/// while the reserve keeps a sample that misleads from a scan of all.
const COVER: (i128, i128) = (11, 10);
const RESERVE: (i128, i128) = (2, 1);

/// The [`Split`] of an input of `n` classes: from the hull steps of
/// [`sample_size`] evenly spaced classes, the efficiency of the most
/// efficient ones that are [`SAMPLE_RANK`] or more and hold about
/// [`COVER`] times `target` extra tokens (each sampled class standing for
/// `n / size`), and the same for [`RESERVE`]. None for a small input or
/// when the sample never gets there. Any split gives the same output.
/// `steps(m, f)` calls `f` on the hull steps of item `m`.
fn threshold(
    n: usize,
    item: &impl Fn(u32) -> u32,
    target: i64,
    steps: &mut impl FnMut(u32, &mut dyn FnMut(u16, f64, i64, usize) -> bool),
) -> Option<Split> {
    if n < SPLIT_MIN {
        return None;
    }
    let size = sample_size(n);
    let every = n / size;
    let mut sample: Vec<(u64, f64, i64)> = Vec::with_capacity(2 * size);
    for s in 0..size {
        steps(item((s * every) as u32), &mut |_, efficiency, extra, _| {
            sample.push((desc_bits(efficiency), efficiency, extra));
            true
        });
    }
    let want = |(times, per): (i128, i128)| times * target as i128 / per;
    let mut tokens = 0i128;
    let mut split: Option<Split> = None;
    // The walk reads the sample in order of keys, usually a small part of
    // it: ordered a part at a time (an eighth, then twice as much).
    let mut ordered = 0;
    for rank in 0..sample.len() {
        if rank == ordered {
            ordered = order_to(ordered, sample.len());
            order_next(&mut sample, rank, ordered);
        }
        let (key, efficiency, extra) = sample[rank];
        tokens += extra as i128 * every as i128;
        if rank + 1 < SAMPLE_RANK {
            continue;
        }
        match &mut split {
            None if tokens >= want(COVER) => {
                split = Some(Split {
                    key,
                    efficiency,
                    reserve: None,
                });
            }
            Some(split) if tokens >= want(RESERVE) => {
                split.reserve = Some((key, efficiency));
                break;
            }
            _ => {}
        }
    }
    split
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::Options;
    use crate::items::NewItem;
    use crate::testing::Rng;

    /// `threshold`: the split where the sampled steps (each standing for
    /// `n / size` classes) hold 1.1 times the target, and at least
    /// `SAMPLE_RANK` of them; the reserve where they hold twice it (the
    /// next step when one step covers both); none past the sample.
    #[test]
    fn threshold_splits_at_1_1_times_the_target_and_keeps_a_reserve_to_2() {
        let n = 4096;
        // One step a class: 10 tokens, efficiencies falling with the
        // class; 256 sampled, one in 16 (160 tokens each).
        let eff = |m: u32| (1.0 - m as f64 / n as f64) / 10.0;
        let mut steps = |m: u32, f: &mut dyn FnMut(u16, f64, i64, usize) -> bool| {
            f(0, eff(m), 10, 0);
        };
        assert_eq!(sample_size(n), 256);
        let at = |rank: u32| (desc_bits(eff(16 * rank)), eff(16 * rank));
        let mut split = |target| threshold(n, &|p| p, target, &mut steps);
        // 1,760 tokens: 11 steps; 3,200: 20.
        let s = split(1600).unwrap();
        assert_eq!((s.key, s.efficiency), at(10));
        assert_eq!(s.reserve, Some(at(19)));
        // 110 tokens: one step, but eight at least; the reserve's 200
        // tokens too: the next step.
        let s = split(100).unwrap();
        assert_eq!(((s.key, s.efficiency), s.reserve), (at(7), Some(at(8))));
        // 33,000 tokens: 207 steps; 60,000 are more than the 40,960
        // sampled: no reserve; 44,000: no split.
        let s = split(30_000).unwrap();
        assert_eq!(((s.key, s.efficiency), s.reserve), (at(206), None));
        assert!(split(40_000).is_none());
        assert!(threshold(SPLIT_MIN - 1, &|p| p, 10, &mut steps).is_none());
    }

    /// `threshold` over steps sampled out of order, with ties: the split
    /// and the reserve at the ranks of the steps in order of efficiency,
    /// near the start of the walk and far into it (past the parts ordered
    /// first); `order_to` by hand.
    #[test]
    fn threshold_walks_the_sample_in_order_of_efficiency() {
        let n = 10_240;
        // One step a class of 8 tokens (160 with the 20 classes each
        // sampled one stands for); 512 sampled, efficiencies shuffled, in
        // pairs of equal ones.
        assert_eq!(sample_size(n), 512);
        let eff = |m: u32| ((m / 40).wrapping_mul(2_654_435_761) % 1021) as f64 / 1e4;
        let mut steps = |m: u32, f: &mut dyn FnMut(u16, f64, i64, usize) -> bool| {
            f(0, eff(m), 8, 0);
        };
        let mut effs: Vec<f64> = (0..512).map(|s| eff(20 * s)).collect();
        effs.sort_by(|a, b| b.total_cmp(a));
        let at = |rank: usize| (desc_bits(effs[rank]), effs[rank]);
        for (target, split, reserve) in [(800, 7, 9), (16_000, 109, 199), (40_000, 274, 499)] {
            let s = threshold(n, &|p| p, target, &mut steps).unwrap();
            assert_eq!((s.key, s.efficiency), at(split), "target {target}");
            assert_eq!(s.reserve, Some(at(reserve)), "target {target}");
        }
        assert_eq!(order_to(0, 1000), 125);
        assert_eq!(order_to(125, 1000), 250);
        assert_eq!(order_to(600, 1000), 1000);
        assert_eq!((order_to(0, 4), order_to(1, 4)), (1, 2));
    }

    /// `first_fits` by hand: the lightest option must fit, and the first
    /// step's fewest tokens by the store's bounds (unknown when its options
    /// may not fit the target: then the lightest decides).
    #[test]
    fn first_fits_asks_the_lightest_option_and_the_first_step() {
        let mut it = Items::new();
        for _ in 0..2 {
            it.push(NewItem {
                tokens: 100,
                score: 0.5,
                kind: None,
            })
            .unwrap();
        }
        // Item 0's first step is its variant of 10 tokens (0.05 a unit of
        // share per token against its own 0.01); item 1's is itself (its
        // variant keeps 0.005), its lightest option still 10 tokens.
        it.add_variant(0, 10, 0.5, None).unwrap();
        it.add_variant(1, 10, 0.05, None).unwrap();
        let view = it.view();
        let fits = |m, room, target| first_fits(&it, &view, m, (room, target));
        assert!(fits(0, 10, 1000) && !fits(0, 9, 1000));
        assert!(fits(1, 100, 1000) && !fits(1, 99, 1000) && !fits(1, 50, 1000));
        // A target below item 1's own tokens: its first step may be the
        // variant.
        assert!(fits(1, 50, 60) && fits(1, 10, 60) && !fits(1, 9, 60));
    }

    /// `may_step` decides by the store's bound when the options it bounds
    /// fit the target (at the boundaries of both), else asks; `light_fits`
    /// takes a zero-token candidate, never a negative-token one.
    #[test]
    fn may_step_asks_only_when_the_bound_cannot_tell() {
        let never = || -> bool { panic!("asked") };
        assert!(may_step((5, 10), 10, 5, never));
        assert!(!may_step((6, 10), 100, 5, never));
        assert!(!may_step((5, 10), 9, 5, || false));
        assert!(may_step((5, 10), 9, 0, || true));
        assert!(may_step((0, u16::MAX), i64::MAX, 0, || true));
        assert!(!may_step((0, u16::MAX), i64::MAX, 0, || false));
        assert!(light_fits(0, 0, 0) && light_fits(5, 5, 5));
        assert!(!light_fits(-1, -1, 5) && !light_fits(5, 6, 5));
    }

    /// `keep_highest` keeps the `k` highest bounds and every tie of the
    /// lowest of them, and returns it.
    #[test]
    fn keep_highest_keeps_the_ties_of_the_least_kept() {
        let all = [(0.5, 0), (0.9, 1), (0.7, 2), (0.7, 3), (0.1, 4), (0.7, 5)];
        for (k, least, kept) in [
            (1, 0.9, vec![1]),
            (2, 0.7, vec![1, 2, 3, 5]),
            (5, 0.5, vec![0, 1, 2, 3, 5]),
        ] {
            let mut found = all.to_vec();
            assert_eq!(keep_highest(&mut found, k), least, "k {k}");
            let mut got: Vec<u32> = found.iter().map(|e| e.1).collect();
            got.sort_unstable();
            assert_eq!(got, kept, "k {k}");
        }
    }

    /// `highest`: of the candidates below `high` that fit, the `k` of the
    /// highest bounds and the bound below which others were left; all of
    /// them and -infinity when no more than `k` do; the same when it
    /// keeps only the highest on the way (and then finds no more).
    #[test]
    fn highest_finds_the_k_highest_bounds_that_fit() {
        let sorted = |found: &[(f64, u32)]| {
            let mut v: Vec<u32> = found.iter().map(|e| e.1).collect();
            v.sort_unstable();
            v
        };
        let mut found = Vec::new();
        let fits = |m: u32| !m.is_multiple_of(3);
        let bound = |m: u32| m as f64;
        // The bounds as a column too (candidates in item order).
        let column: Vec<f32> = (0..1000).map(|m| m as f32).collect();
        let mut run = |(n, high, k),
                       item: &dyn Fn(u32) -> u32,
                       bound: &dyn Fn(u32) -> f64,
                       fits: &dyn Fn(u32) -> bool| {
            let column = match item(1) {
                1 => &column[..n],
                _ => &[],
            };
            let scan = Scan {
                n,
                item,
                bound,
                column,
                leads: &[],
            };
            let cut = highest((&scan, high, k), (None, fits), &mut found);
            (cut, sorted(&found))
        };
        // Below 8 and fitting: 1, 2, 4, 5, 7.
        assert_eq!(run((10, 8.0, 2), &|p| p, &bound, &fits), (5.0, vec![5, 7]));
        assert_eq!(
            run((10, 8.0, 5), &|p| p, &bound, &fits),
            (f64::NEG_INFINITY, vec![1, 2, 4, 5, 7])
        );
        // In another order (position 0 is item 9, ...): positions. The
        // lowest are left on the way (four found, two kept), none after:
        // still left below the cut.
        assert_eq!(
            run((10, 8.0, 2), &|p| 9 - p, &bound, &fits),
            (5.0, vec![2, 4])
        );
        // 1,000 candidates, 4 kept: the highest kept on the way.
        assert_eq!(
            run((1000, 999.5, 4), &|p| p, &bound, &|_| true),
            (996.0, vec![996, 997, 998, 999])
        );
        // Ties of the cut are kept (no column: the bounds are not its).
        assert_eq!(
            run(
                (8, 9.0, 3),
                &|p| p + 1000,
                &|m| ((m - 1000) / 2) as f64,
                &|_| true
            ),
            (2.0, vec![4, 5, 6, 7])
        );
    }

    /// `at_least32` is the least `f32` at or above a number, so the
    /// column's tests are the bounds' tests: by hand at both signs, the
    /// infinities and NaN, and against the `f64` comparisons on numbers
    /// next to `f32`s.
    #[test]
    fn at_least32_is_the_least_f32_at_or_above() {
        let tenth = 0.1f32;
        assert!(f64::from(tenth) > 0.1);
        assert_eq!(at_least32(0.1), tenth);
        assert_eq!(at_least32(f64::from(tenth)), tenth);
        assert_eq!(at_least32(f64::from(tenth).next_up()), tenth.next_up());
        assert_eq!(at_least32(-0.1), (-tenth).next_up());
        assert_eq!(at_least32(f64::INFINITY), f32::INFINITY);
        assert_eq!(at_least32(1e300), f32::INFINITY);
        assert_eq!(at_least32(-1e300), -f32::MAX);
        assert_eq!(at_least32(f64::NEG_INFINITY), f32::NEG_INFINITY);
        assert!(at_least32(f64::NAN).is_nan());
        let mut rng = Rng(32);
        for _ in 0..20_000 {
            let b = (rng.below(2001) as f32 - 1000.0) / 7.0;
            let x = match rng.below(4) {
                0 => f64::from(b),
                1 => f64::from(b).next_up(),
                2 => f64::from(b).next_down(),
                _ => (rng.below(2001) as f64 - 1000.0) / 7.0,
            };
            assert_eq!(f64::from(b) >= x, b >= at_least32(x), "{b} >= {x}");
            assert_eq!(f64::from(b) < x, b < at_least32(x), "{b} < {x}");
        }
    }

    /// A scan gathers the same candidates from the column (16 at a time)
    /// as from the bounds one at a time, and they are those whose bound is
    /// in the range, in order: chunks of every length, a column shorter
    /// than the candidates, limits on the bounds and next to them. With a
    /// room and the store's first-step bounds beside the column, those
    /// [`may_step`] keeps without asking, at the limits of the `u16`s.
    #[test]
    fn scans_gather_the_same_from_the_column_as_from_the_bounds() {
        let mut rng = Rng(16);
        let mut hits = [0u32; CHUNK];
        let near = [0, 1, 11, 12, 13, 65_533, 65_534, 65_535, 65_536, 1 << 40];
        for case in 0..400 {
            let n = 1 + rng.below(3 * CHUNK as u64) as usize;
            let values: Vec<f32> = (0..n).map(|_| rng.below(40) as f32 / 8.0).collect();
            let word = |rng: &mut Rng| match rng.below(3) {
                0 => u16::MAX,
                1 => rng.below(30) as u16,
                _ => (65_520 + rng.below(16)) as u16,
            };
            let leads: Vec<(u16, u16)> = (0..n).map(|_| (word(&mut rng), word(&mut rng))).collect();
            let bound = |m: u32| f64::from(values[m as usize]);
            let reach = if case % 3 == 0 {
                rng.below(n as u64) as usize
            } else {
                n
            };
            let by_column = Scan {
                n,
                item: |p| p,
                bound,
                column: &values[..reach],
                leads: &leads,
            };
            let by_bounds = Scan {
                n,
                item: |p| p,
                bound,
                column: &[],
                leads: &[],
            };
            let near_value = |rng: &mut Rng| {
                let v = f64::from(values[rng.below(n as u64) as usize]);
                match rng.below(3) {
                    0 => v,
                    1 => v.next_up(),
                    _ => v.next_down(),
                }
            };
            let lo = near_value(&mut rng);
            let hi = (case % 2 == 0).then(|| near_value(&mut rng));
            let pick = |rng: &mut Rng| match rng.below(2) {
                0 => near[rng.below(near.len() as u64) as usize],
                _ => rng.below(40) as i64,
            };
            let fit = (case % 4 < 2).then(|| (pick(&mut rng), 1 + pick(&mut rng)));
            for start in (0..n as u32).step_by(CHUNK) {
                let end = (start as usize + CHUNK).min(n) as u32;
                let in_range = |p: u32| bound(p) >= lo && hi.is_none_or(|hi| bound(p) < hi);
                let want: Vec<u32> = (start..end).filter(|&p| in_range(p)).collect();
                let count = by_bounds.gather(start, &mut hits, (lo, hi), fit);
                assert_eq!(hits[..count], want, "bounds, case {case} from {start}");
                // The first steps only with an upper limit, as the scans
                // below the split ask, and from the column.
                let may = |p: u32| {
                    let lead = leads[p as usize];
                    let from_column = end as usize <= reach && hi.is_some();
                    fit.is_none_or(|(room, target)| {
                        !from_column || may_step(lead, target, room, || true)
                    })
                };
                let want: Vec<u32> = want.into_iter().filter(|&p| may(p)).collect();
                let count = by_column.gather(start, &mut hits, (lo, hi), fit);
                assert_eq!(hits[..count], want, "column, case {case} from {start}");
            }
        }
    }

    /// `may_reach` is the bound the split's filter is: true up to the
    /// item's reach times its score (within the rounding allowance) and
    /// false past it, for the item itself (score per token) and for its
    /// variants (score times the largest share per token).
    #[test]
    fn may_reach_is_exact_at_its_bounds() {
        let mut it = Items::new();
        for tokens in [4, 0, 100, -5] {
            it.push(NewItem {
                tokens,
                score: 0.5,
                kind: None,
            })
            .unwrap();
        }
        // Item 2's best variant keeps 1.0 of its score in 2 tokens: 0.5 of
        // the score per token.
        it.add_variant(2, 2, 1.0, None).unwrap();
        it.add_variant(2, 10, 1.0, None).unwrap();
        let r = |m| it.reach(m);
        // The item itself: 0.5 in 4 tokens is 0.125 a token.
        assert!(may_reach(0.5, r(0), 0.125));
        assert!(may_reach(0.5, r(0), 0.125 * (1.0 + 5e-10)), "allowance");
        assert!(!may_reach(0.5, r(0), 0.125 * (1.0 + 2e-9)));
        assert!(!may_reach(0.0, r(0), 1e-300), "no score, no steps");
        assert!(!may_reach(-0.5, r(0), 1e-300));
        // A zero-token item reaches any efficiency (with a score).
        assert!(may_reach(0.5, r(1), f64::MAX));
        assert!(!may_reach(0.0, r(1), 1e-300));
        // The variant: 0.5 * 0.5 = 0.25 a token, far above the item's own.
        assert!(may_reach(0.5, r(2), 0.25));
        assert!(!may_reach(0.5, r(2), 0.25 * (1.0 + 2e-9)));
        // A negative-token item never does.
        assert!(!may_reach(0.5, r(3), 1e-300));
        // No score: no steps, below every efficiency.
        assert_eq!(reach_bound(0.0, r(1)), f64::NEG_INFINITY);
        assert_eq!(reach_bound(0.0, r(0)), f64::NEG_INFINITY);
    }

    /// Seeded items with 0 to 3 variants each: some zero-token, some
    /// negative-token (never candidates), some zero-score, tokens from 0
    /// to 2,000 and scores in steps of 1/100 (so efficiencies tie).
    fn random_items(rng: &mut Rng, n: usize) -> Items {
        let mut it = Items::new();
        for i in 0..n {
            let tokens = match rng.below(50) {
                0 => 0,
                1 => -5,
                _ => 1 + rng.below(2000) as i64,
            };
            let score = rng.below(100) as f64 / 100.0;
            it.push(NewItem {
                tokens,
                score,
                kind: None,
            })
            .unwrap();
            for _ in 0..rng.below(4) {
                let t = rng.below(tokens.max(1) as u64 + 20) as i64;
                let v = (1 + rng.below(20)) as f64 / 20.0;
                it.add_variant(i, t, v, None).unwrap();
            }
        }
        it
    }

    /// What the options path chooses: [`super::super::greedy::greedy`]
    /// over the options of the Sort-stage order.
    fn by_options(it: &Items, target: i64) -> Vec<Chosen> {
        let view = it.view();
        let mut cands = crate::sort::sort_stage(&view);
        cands.retain(|&i| view.tokens(i) >= 0);
        let one = |p: usize| std::slice::from_ref(&cands[p]);
        let o = Options::build(it, view, view, &cands, one);
        let all: Vec<u32> = (0..o.len() as u32).collect();
        let chosen = super::super::greedy::greedy(&o.view(view), &all, target);
        o.expand(view, &chosen, one)
    }

    /// `first_step` and `bound_key` on hand-made items: the first step's
    /// fewest tokens (0 when another option may be first), no step without
    /// a score, and a bound just above the best score per token.
    #[test]
    fn first_step_and_bound_key_by_hand() {
        let mut it = Items::new();
        let items = [
            (10, 1.0),
            (2, 1.0),
            (4, 1.0),
            (0, 1.0),
            (10, 1.0),
            (1_000_000, 1.0),
            (10_000_000, 1.0),
        ];
        for (tokens, score) in items {
            it.push(NewItem {
                tokens,
                score,
                kind: None,
            })
            .unwrap();
        }
        it.add_variant(0, 2, 0.5, None).unwrap(); // 0.25 a token, over 0.1
        it.add_variant(1, 10, 0.5, None).unwrap(); // 0.05, under 0.5
        it.add_variant(2, 2, 0.5, None).unwrap(); // 0.25: ties the item's
        it.add_variant(4, 0, 0.1, None).unwrap(); // no tokens: first
        it.add_variant(6, 1_000_000, 1.0, None).unwrap(); // 1e-6, over 1e-7
        let first =
            |m: u32, s: f64, target: i64| first_step(&it, m, it.view().tokens(m), s, target);
        assert_eq!(first(0, 1.0, 100), 2, "the variant");
        assert_eq!(first(0, 1.0, 2), 2);
        assert_eq!(first(0, 1.0, 1), 0, "the variant past the target: unknown");
        assert_eq!(first(1, 1.0, 100), 2, "the item itself");
        assert_eq!(first(1, 1.0, 1), 0);
        assert_eq!(first(2, 1.0, 4), 2, "either; the fewest");
        assert_eq!(first(2, 1.0, 3), 0, "one of them past the target");
        assert_eq!(first(3, 1.0, 100), 0, "a zero-token item");
        assert_eq!(first(4, 1.0, 100), 0, "a zero-token variant");
        assert_eq!(first(0, 0.0, 100), i64::MAX, "no score, no step");
        assert_eq!(first(0, -1.0, 100), i64::MAX);
        assert_eq!(first(0, 1e-300, 100), 0, "too small to tell");
        assert_eq!(first(0, 1e-270, 100), 2);
        // Too small by the item itself (1e-278 a token and less), and by
        // its variant (a millionth of the score a token).
        assert_eq!(first(5, 1e-278, i64::MAX), 0);
        assert_eq!(first(5, 1e-273, i64::MAX), 1_000_000);
        assert_eq!(first(6, 1e-276, i64::MAX), 0);
        assert_eq!(first(6, 1e-273, i64::MAX), 1_000_000);
        let bound = |m: u32, s: f64| bound_key(&it, m, it.view().tokens(m), s);
        for (m, best) in [(0, 0.25), (1, 0.5), (2, 0.25), (3, f64::INFINITY)] {
            let key = bound(m, 2.0);
            assert!(key <= desc_bits(2.0 * best), "item {m}");
            if best.is_finite() {
                assert!(key > desc_bits(2.0 * best * (1.0 + 2e-9)), "item {m}");
            }
        }
        assert_eq!(bound(4, 1.0), desc_bits(f64::INFINITY));
        assert_eq!(bound(0, 0.0), u64::MAX);
        assert_eq!(bound(0, -0.5), u64::MAX);
    }

    /// On seeded items: no hull step comes before `bound_key`, and the
    /// first step takes at least `first_step`'s tokens (none when it says
    /// `i64::MAX`).
    #[test]
    fn first_step_and_bound_key_bound_the_hull() {
        let mut rng = Rng(0x2701_0b0d);
        let it = random_items(&mut rng, 3000);
        let view = it.view();
        let mut opts = Vec::new();
        let (mut tight, mut unknown) = (0, 0);
        for m in 0..it.len() as u32 {
            let (t, s) = (view.tokens(m), view.score(m));
            if t < 0 {
                continue;
            }
            let target = [5, 500, 5000][m as usize % 3];
            opts.clear();
            push_options(&mut opts, (t, s), it.variant_shares(m));
            let (key, first) = (bound_key(&it, m, t, s), first_step(&it, m, t, s, target));
            let mut steps = 0;
            hull(&opts, target, |step, efficiency, extra, _| {
                assert!(desc_bits(efficiency) >= key, "item {m} step {step}");
                if step == 0 {
                    assert!(extra >= first, "item {m}: {extra} < {first}");
                    tight += usize::from(extra == first);
                }
                steps += 1;
                true
            });
            if first == i64::MAX {
                assert_eq!(steps, 0, "item {m}");
            }
            unknown += usize::from(first == 0 && t > 0);
        }
        // Mostly exact, some unknown (a leading option past the target).
        assert!(
            tight > 1500 && unknown > 50,
            "{tight} exact, {unknown} unknown"
        );
    }

    /// Items of 50 to 1,000 tokens, each with a 12-token placeholder worth
    /// `share` and a third-length summary worth half: nearly every item's
    /// lightest option fits whatever the pass leaves.
    fn placeholder_items(rng: &mut Rng, n: usize, share: f64) -> Items {
        let mut it = Items::new();
        for i in 0..n {
            let tokens = 50 + rng.below(951) as i64;
            let score = rng.below(10_000) as f64 / 10_000.0;
            it.push(NewItem {
                tokens,
                score,
                kind: None,
            })
            .unwrap();
            it.add_variant(i, (tokens + 2) / 3, 0.5, None).unwrap();
            it.add_variant(i, 12, share, None).unwrap();
        }
        it
    }

    /// Below the split, the candidates are read a few at a time, the
    /// highest bounds first, and those whose first step no longer fits
    /// only when a repair may choose them: a list whose every item has a
    /// placeholder that fits what the pass left has a few of them read,
    /// not all, whether the placeholder is the first step (worth a
    /// twentieth) or none (worth a thousandth); the choice is the options
    /// path's.
    #[test]
    fn placeholders_that_fit_are_not_all_read() {
        let mut rng = Rng(0x2701_9ace);
        let mut fallbacks = 0;
        for case in 0..32 {
            let n = 20_000 + rng.below(10_000) as usize;
            let share = [0.05, 0.001][case % 2];
            let it = placeholder_items(&mut rng, n, share);
            let view = it.view();
            let total: i64 = (0..n as u32).map(|i| view.tokens(i)).sum();
            let target = (total / 400) + rng.below(1000) as i64;
            same_choice(&it, target, &format!("case {case}: n {n} target {target}"));
            assert!(
                READ.get() < n / 5,
                "case {case}: {} of {n} read",
                READ.get()
            );
            fallbacks += usize::from(FALLBACK.get());
        }
        assert!(fallbacks >= 6, "{fallbacks} of 32 left a placeholder room");
    }

    /// The repairs of candidates left unread go on in rounds until none
    /// fits: 3,000 dense items fill all but 40 tokens; below the split, in
    /// Sort-stage order, one whose placeholder takes 30 of them, 300 whose
    /// placeholders (12) then do not fit, and last one whose placeholder
    /// (5) does: it is chosen, in the second round.
    #[test]
    fn repairs_of_unread_candidates_go_on_while_one_fits() {
        let mut it = Items::new();
        let mut push = |count: usize, tokens: i64, score: f64, placeholder: Option<i64>| {
            for _ in 0..count {
                let i = it.len();
                it.push(NewItem {
                    tokens,
                    score,
                    kind: None,
                })
                .unwrap();
                if let Some(t) = placeholder {
                    it.add_variant(i, t, 0.001, None).unwrap();
                }
            }
        };
        push(3000, 10, 0.9, None);
        push(2000, 1000, 0.9, None);
        push(1, 1000, 0.12, Some(30));
        push(300, 1000, 0.11, Some(12));
        push(1, 1000, 0.10, Some(5));
        same_choice(&it, 30_040, "repairs in rounds");
        let got = greedy(&it, &it.view(), None, 30_040);
        let repaired: Vec<(u32, u8, i64)> = (got.iter())
            .filter(|c| c.item >= 5000)
            .map(|c| (c.item, c.variant, c.tokens))
            .collect();
        assert_eq!(repaired, [(5000, 1, 30), (5301, 1, 5)]);
    }

    /// Below the split, a few candidates whose steps fit: all of them read
    /// in one round (3,000 dense items fill all but 50 tokens; 20 of 5
    /// tokens below the split, 2,000 of 1,000 tokens above it).
    #[test]
    fn a_few_below_the_split_are_read_at_once() {
        let mut it = Items::new();
        let kinds = [(3000, 10, 0.9), (2000, 1000, 0.9), (20, 5, 0.001)];
        for (count, tokens, score) in kinds {
            for _ in 0..count {
                it.push(NewItem {
                    tokens,
                    score,
                    kind: None,
                })
                .unwrap();
            }
        }
        it.add_variant(0, 5, 0.5, None).unwrap();
        same_choice(&it, 30_050, "a few below");
        let got = greedy(&it, &it.view(), None, 30_050);
        let small = got.iter().filter(|c| c.item >= 5000).count();
        assert_eq!(
            (got.len(), small),
            (3010, 10),
            "the dense ones, then ten small"
        );
    }

    /// A split from a sample that misleads: the sampled items are dense,
    /// the rest thin, so the pass above the split leaves most of the
    /// budget and the candidates below it are read in many rounds.
    #[test]
    fn a_misleading_sample_reads_below_the_split_in_rounds() {
        let mut rng = Rng(0x2701_5a3e);
        for case in 0..8 {
            let n = 4096 + rng.below(4096) as usize;
            let every = n / sample_size(n);
            let mut it = Items::new();
            for i in 0..n {
                let sampled = i % every == 0;
                let tokens = 10 + rng.below(90) as i64;
                let score = if sampled {
                    0.9
                } else {
                    rng.below(50) as f64 / 100.0
                };
                it.push(NewItem {
                    tokens,
                    score,
                    kind: None,
                })
                .unwrap();
                if rng.below(2) == 0 {
                    it.add_variant(i, tokens / 4, 0.4, None).unwrap();
                }
                if case % 2 == 0 {
                    it.add_variant(i, 3, 0.02, None).unwrap();
                }
            }
            let view = it.view();
            let total: i64 = (0..n as u32).map(|i| view.tokens(i)).sum();
            let target = total / 8 + rng.below(100) as i64;
            same_choice(&it, target, &format!("case {case}: n {n} target {target}"));
            assert!(
                READ.get() > 2 * FIRST_READ,
                "case {case}: {} read",
                READ.get()
            );
        }
    }

    /// Below the split and the reserve, the scan finds the candidates
    /// whose first step fits what is left, also one whose own tokens keep
    /// the most per token but exceed the target (its first step is then
    /// its placeholder): 20,000 dense items of 25 tokens fill all but 20
    /// of the target; of the 2,000 items of over 30,000 tokens, the pass
    /// takes the placeholder that keeps the most (the last item's), not
    /// the first in Sort-stage order (a repair's). (Their bounds are their
    /// own tokens': the scans read them all, 512 and then the rest.)
    #[test]
    fn a_scan_below_the_split_finds_the_first_steps_that_fit() {
        let mut it = Items::new();
        let mut big = Vec::new();
        for i in 0..22_000 {
            let (tokens, score) = match i % 11 {
                5 => (30_000 + i as i64, 1.0),
                _ => (25, 0.5),
            };
            it.push(NewItem {
                tokens,
                score,
                kind: None,
            })
            .unwrap();
            if i % 11 == 5 {
                let share = 1e-5 * (1.0 + big.len() as f64 / 1000.0);
                it.add_variant(i, 12, share, None).unwrap();
                big.push(i as u32);
            }
        }
        let target = 25 * 1000 + 20;
        same_choice(&it, target, "placeholders below the split");
        let got = greedy(&it, &it.view(), None, target);
        let last = *big.last().unwrap();
        assert!(got.iter().any(|c| c.item == last && c.variant == 1));
    }

    /// [`greedy`] over the candidates in item order (with the pushed scores
    /// and with the same scores passed) and in Sort-stage order chooses
    /// what the options path does (`label` names the case);
    /// [`READ`] is then the Sort-order call's.
    fn same_choice(it: &Items, target: i64, label: &str) {
        let view = it.view();
        let want = by_options(it, target);
        let got = greedy(it, &view, None, target);
        assert_eq!(got, want, "{label}, item order");
        // The same scores, not the pushed ones: bounded by score and reach,
        // not by the store's peaks.
        let scores = view.scores().to_vec();
        let scored = it.view_scored(&scores);
        assert!(it.scores_pushed(&view) && !it.scores_pushed(&scored));
        let got = greedy(it, &scored, None, target);
        assert_eq!(got, want, "{label}, scores not pushed");
        let mut sorted = crate::sort::sort_stage(&view);
        sorted.retain(|&i| view.tokens(i) >= 0);
        let got = greedy(it, &view, Some(&sorted), target);
        assert_eq!(got, want, "{label}, Sort order");
    }

    /// An unselected class whose lightest option is exactly what the pass
    /// leaves is a repair's candidate (its steps too): repaired at it; one
    /// a token heavier is not.
    #[test]
    fn a_lightest_option_that_fits_exactly_is_repaired() {
        for (light, repaired) in [(2, true), (3, false)] {
            let mut it = Items::new();
            for (tokens, score) in [(8, 8.0), (5, 4.0)] {
                it.push(NewItem {
                    tokens,
                    score,
                    kind: None,
                })
                .unwrap();
            }
            // Item 1's first step is itself (0.8 a token), which no longer
            // fits the 2 tokens item 0 leaves.
            it.add_variant(1, light, 0.3, None).unwrap();
            let mut want = vec![Chosen {
                item: 0,
                variant: 0,
                tokens: 8,
            }];
            if repaired {
                want.push(Chosen {
                    item: 1,
                    variant: 1,
                    tokens: light,
                });
            }
            assert_eq!(greedy(&it, &it.view(), None, 10), want, "lightest {light}");
            same_choice(&it, 10, "an exact fit");
        }
    }

    /// The pass drops from its pool what no longer fits instead of ordering
    /// it: 1,020 dense items of 10 tokens fill the target exactly, so of
    /// the 1,020 thin items of 100 tokens (each of its own density) only
    /// those the first round orders (it orders 1,024 or more) are ordered.
    #[test]
    fn steps_that_no_longer_fit_are_not_ordered() {
        let mut it = Items::new();
        for i in 0..2040 {
            let (tokens, score) = match i % 2 {
                0 => (10, 0.9),
                _ => (100, 0.1 + i as f64 * 1e-5),
            };
            it.push(NewItem {
                tokens,
                score,
                kind: None,
            })
            .unwrap();
        }
        it.add_variant(1, 50, 0.25, None).unwrap();
        POOLED.set(0);
        ORDERED.set(0);
        let got = greedy(&it, &it.view(), None, 10_200);
        assert_eq!(got, by_options(&it, 10_200));
        assert_eq!(got.len(), 1020, "the dense ones");
        let (pooled, ordered) = (POOLED.get(), ORDERED.get());
        assert!(
            pooled >= 2040 && ordered < 1100,
            "{pooled} pooled, {ordered} ordered"
        );
    }

    #[test]
    fn the_same_choice_as_the_options_path_in_item_or_sort_order() {
        let mut rng = Rng(0x2700_d1ec);
        for case in 0..60 {
            // Small inputs, and inputs large enough to be split.
            let n = match case % 3 {
                0 => rng.below(300) as usize,
                _ => SPLIT_MIN + rng.below(20_000) as usize,
            };
            let it = random_items(&mut rng, n);
            let view = it.view();
            let total: i64 = (0..n as u32).map(|i| view.tokens(i).max(0)).sum();
            // From nothing to everything, most of them small.
            let target = match rng.below(4) {
                0 => rng.below(total as u64 + 10) as i64,
                _ => rng.below(1 + total as u64 / 50) as i64,
            };
            same_choice(&it, target, &format!("case {case}: n {n} target {target}"));
        }
    }
}
