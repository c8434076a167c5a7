//! KnapsackSlice over options (a list with variants): the multiple-choice
//! knapsack, exact at the bucket granularity. Read beside `mod.rs`: the
//! same steps, with a class of options where the spec has one row.
//!
//! - An option's weight is `ceil(tokens / bucket_size)` (0 for 0 tokens),
//!   its value the view's integer value. A class whose candidate was pushed
//!   with 0 tokens is a zero-token item: always included, as pushed.
//! - A class with an option of weight 0 always takes at least the best of
//!   them: its other options count only what they add to it.
//! - Options that cannot set a keep bit go first: over the capacity, of
//!   value 0, dominated within their class (another option no heavier and
//!   worth at least as much), or in no best selection (`reduce.rs`, a
//!   bound from the LP relaxation against a selection that fits). A class
//!   left with one option is a plain
//!   row, and the rows of such classes pass the row filter of `filter.rs`
//!   (its proof holds with other classes between them: a row it drops
//!   changes no cell, whatever the other rows are).
//! - One DP row per class: consecutive plain rows two at a time through the
//!   fused kernels, a class of several options through the choice kernels
//!   (`kernel::Choice`: each cell the best of the cell and each option, one
//!   keep bit row per option). Cells below those reconstruction reads are
//!   skipped as in `rows.rs`.
//! - Reconstruction from the last class down: the last option whose keep
//!   bit is set at the remaining capacity is the class's choice.

use super::filter::drop_dominated;
use super::reduce::reduce;
use super::scratch::{dp_array, grow, with_scratch, Scratch};
use super::{ceil_div, TableSize};
use crate::choice::class_runs;
use crate::choice::Chosen;
use crate::error::Result;
use crate::items::{Items, View};
use crate::slicer::kernel::{self, Bits32, Kernel, Lane};

/// One class that takes part in the DP.
#[derive(Clone, Copy)]
struct Class {
    /// Its best option of weight 0 (its id), if any.
    zero: Option<u32>,
    /// Its options in `opts`: `opts[start..end]`.
    start: usize,
    end: usize,
}

/// KNAPSACK-SLICE over the options `cands` of `items` (a view with
/// classes): the chosen options, zero-token candidates first (in `cands`
/// order), then the others in reconstruction order.
pub fn knapsack(
    items: &View<'_>,
    cands: &[u32],
    target: i64,
    bucket: i64,
    memory_limit: usize,
) -> Result<Vec<u32>> {
    if cands.is_empty() || target <= 0 {
        return Ok(Vec::new());
    }
    let classes = items.classes().expect("a view of options");
    let source = OfOptions {
        items,
        cands,
        runs: class_runs(classes, cands),
    };
    let chosen = with_scratch(|scratch| solve(scratch, &source, target, bucket, memory_limit))?;
    Ok(chosen.iter().map(|&p| cands[p as usize]).collect())
}

/// [`knapsack`] over the items `sorted` (Sort order) of `view`, each with
/// its variants in `all`, read straight from the item store: the same
/// choice as over `crate::choice::Options` built for them (no groups),
/// in the same order, without building them. `None` for a list too long
/// to number its options in 32 bits (then build them).
pub fn knapsack_items(
    all: &Items,
    view: &View<'_>,
    sorted: &[u32],
    target: i64,
    bucket: i64,
    memory_limit: usize,
) -> Option<Result<Vec<Chosen>>> {
    if sorted.len() >= 1 << 24 {
        return None;
    }
    if sorted.is_empty() || target <= 0 {
        return Some(Ok(Vec::new()));
    }
    let source = OfItems { all, view, sorted };
    let chosen = with_scratch(|scratch| solve(scratch, &source, target, bucket, memory_limit));
    Some(chosen.map(|ids| {
        ids.iter()
            .map(|&id| {
                let (item, variant) = (sorted[(id >> 8) as usize], (id & 0xff) as u8);
                let tokens = match variant {
                    0 => view.tokens(item),
                    v => all.variant_shares(item)[v as usize - 1].0,
                };
                Chosen {
                    item,
                    variant,
                    tokens,
                }
            })
            .collect()
    }))
}

/// Where the classes and their options come from: each class's options
/// as (id, tokens, value), the option as pushed first, ids increasing.
trait Source {
    fn len(&self) -> usize;
    fn options(&self, class: usize, out: &mut Vec<(u32, i64, i64)>);
    /// Whether [`Source::bound`] says anything.
    const BOUNDS: bool = false;
    /// Without reading the class's options: at least the largest value
    /// per unit of weight (`bucket` tokens) of any of them, and at most
    /// the smallest weight of any of them; `None` when it has an option
    /// of 0 tokens (it is always read).
    fn bound(&self, _class: usize, _bucket: i64) -> Option<(f64, i64)> {
        None
    }
}

/// A view of options: ids are positions in `cands`.
struct OfOptions<'a, 'v> {
    items: &'a View<'v>,
    cands: &'a [u32],
    runs: Vec<(usize, usize)>,
}

impl Source for OfOptions<'_, '_> {
    fn len(&self) -> usize {
        self.runs.len()
    }

    fn options(&self, class: usize, out: &mut Vec<(u32, i64, i64)>) {
        let (start, end) = self.runs[class];
        out.extend((start..end).map(|p| {
            let o = self.cands[p];
            (
                p as u32,
                self.items.tokens(o),
                self.items.value(o, super::scaled_value),
            )
        }));
    }
}

/// Items and their variants as `crate::choice::Options` makes them options
/// (a zero-token item has none): ids are `position << 8 | variant`.
struct OfItems<'a, 'v> {
    all: &'a Items,
    view: &'a View<'v>,
    sorted: &'a [u32],
}

impl Source for OfItems<'_, '_> {
    fn len(&self) -> usize {
        self.sorted.len()
    }

    const BOUNDS: bool = true;

    /// From the item store's per-item bounds: the item's own value per
    /// weight, and for its variants `SCORE_SCALE * score * share / weight`
    /// with `share / weight` at most `bucket * share per token` (weight =
    /// ceil(tokens / bucket) >= tokens / bucket) and at most `1 / the
    /// lightest variant's weight` (share <= 1); a relative allowance for
    /// the rounding of the products.
    fn bound(&self, class: usize, bucket: i64) -> Option<(f64, i64)> {
        let m = self.sorted[class];
        let (t, light) = (self.view.tokens(m), self.all.variant_lightest(m));
        if t == 0 || light == 0 {
            return None;
        }
        let (mut e, mut d) = (f64::NEG_INFINITY, i64::MAX);
        if t > 0 {
            d = ceil_div(t, bucket);
            e = self.view.value(m, super::scaled_value) as f64 / d as f64;
        }
        if light != i64::MAX {
            let w = ceil_div(light, bucket);
            let per = (bucket as f64 * self.all.variant_share_per_token(m)).min(1.0 / w as f64);
            let score = self.view.score(m);
            e = e.max(super::SCORE_SCALE * score * per * (1.0 + 1e-9));
            d = d.min(w);
        }
        Some((e, d))
    }

    fn options(&self, class: usize, out: &mut Vec<(u32, i64, i64)>) {
        let m = self.sorted[class];
        let id = (class as u32) << 8;
        let (tokens, score) = (self.view.tokens(m), self.view.score(m));
        out.push((id, tokens, self.view.value(m, super::scaled_value)));
        if tokens != 0 {
            let variants = self.all.variant_shares(m).iter();
            out.extend(
                (id + 1..)
                    .zip(variants)
                    .map(|(id, &(t, share))| (id, t, super::scaled_value(score * share))),
            );
        }
    }
}

/// Buffers of [`solve`], kept between calls with the knapsack's others.
#[derive(Default)]
pub(super) struct Buffers {
    /// (id, weight, value) of the options that can matter.
    opts: Vec<(u32, i64, i64)>,
    classes: Vec<Class>,
    /// One class's options at a time, as its source gives them and as
    /// they take part.
    raw: Vec<(u32, i64, i64)>,
    own: Vec<(u32, i64, i64)>,
    /// Per class: one plain row; kept by the row filter.
    plain: Vec<bool>,
    kept: Vec<bool>,
    /// The table's rows as `TableSize` counts them.
    sizing: Vec<(u32, i64, i64)>,
    /// The bounds of the classes not read.
    skipped: Vec<(f64, i64)>,
    /// `opts` and `classes` before a guess's options are packed (kept for
    /// a second run when the guess fails).
    spare: (Vec<(u32, i64, i64)>, Vec<Class>),
}

impl Buffers {
    pub(super) fn bytes(&self) -> usize {
        (self.opts.capacity() + self.raw.capacity() + self.own.capacity() + self.sizing.capacity())
            * 24
            + self.classes.capacity() * std::mem::size_of::<Class>()
            + self.plain.capacity()
            + self.kept.capacity()
            + self.skipped.capacity() * 16
            + self.spare.0.capacity() * 24
            + self.spare.1.capacity() * std::mem::size_of::<Class>()
    }
}

/// The chosen options' ids: zero-token items first, then the others in
/// reconstruction order, then classes whose only options left weigh 0.
fn solve(
    scratch: &mut Scratch,
    source: &impl Source,
    target: i64,
    bucket: i64,
    memory_limit: usize,
) -> Result<Vec<u32>> {
    let mut b = std::mem::take(&mut scratch.choice);
    let out = solve_with(&mut b, scratch, source, target, bucket, memory_limit);
    scratch.choice = b;
    out
}

/// A class's options `raw` that take part, into `own`: of 1 token or
/// more, within the capacity, worth more than its best option of weight 0
/// (returned, the first of equals, if any), lightest first, each worth
/// more than every lighter one (dominance within the class, which also
/// drops those worth 0 or less).
fn class_options(
    raw: &[(u32, i64, i64)],
    own: &mut Vec<(u32, i64, i64)>,
    bucket: i64,
    capacity: i64,
) -> Option<u32> {
    let zero = raw
        .iter()
        .filter(|o| o.1 == 0)
        .max_by(|a, b| a.2.cmp(&b.2).then(b.0.cmp(&a.0)));
    let (zero, base) = (zero.map(|o| o.0), zero.map_or(0, |o| o.2));
    own.clear();
    own.extend(raw.iter().filter_map(|&(id, t, value)| {
        if t <= 0 {
            return None;
        }
        let d = ceil_div(t, bucket);
        let v = value.saturating_sub(base);
        (d <= capacity).then_some((id, d, v))
    }));
    own.sort_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
    let mut best = 0;
    own.retain(|o| {
        let keep = o.2 > best;
        best = best.max(o.2);
        keep
    });
    zero
}

/// Whether the classes not read, each of bound `(e, d)` (every option
/// worth at most `e` a unit of weight and weighing at least `d`), are in
/// no best selection, by what the reduction over the classes read found
/// (`lambda`, `gap`): their options' reduced values `v - lambda w <=
/// -d (lambda - e)` are below the gap, and lambda is the same with them
/// (each of their steps is less efficient than `theta <= lambda`). A
/// relative allowance for rounding.
fn unread_hopeless(skipped: &[(f64, i64)], theta: f64, lambda: f64, gap: f64) -> bool {
    lambda >= theta
        && skipped
            .iter()
            .all(|&(e, d)| d as f64 * (lambda - e) > gap * (1.0 + 1e-9) + 1e-9)
}

/// Lists with fewer classes are read whole.
const SPLIT_MIN: usize = 2048;

/// The efficiency below which [`solve_with`] first leaves classes unread
/// (by their bound): three quarters of the LP break efficiency estimated
/// from the hull steps of evenly spaced classes, each standing for
/// `len / size`. None for a short list or when the sample fits whole. Any
/// threshold gives the same choice.
fn threshold(
    source: &impl Source,
    bucket: i64,
    capacity: i64,
    b: &mut Buffers,
    r: &mut super::reduce::Buffers,
) -> Option<f64> {
    let n = source.len();
    if n < SPLIT_MIN {
        return None;
    }
    let size = (n / 20).clamp(256, 1024);
    let (steps, hull) = r.sample();
    for i in 0..size {
        let class = i * n / size;
        if source.bound(class, bucket).is_none() {
            continue;
        }
        b.raw.clear();
        source.options(class, &mut b.raw);
        class_options(&b.raw, &mut b.own, bucket, capacity);
        hull.clear();
        super::reduce::hull_points(&b.own, hull);
        let scaled = |w: i64| (w as u128 * n as u128 / size as u128) as i64;
        steps.extend(super::reduce::hull_steps(hull).map(|(e, w)| (e, scaled(w))));
    }
    Some(0.75 * super::reduce::break_efficiency(steps, capacity)?)
}

/// Keeps the options `o` of `opts` with `keep(o)` and the classes `c`
/// with `stays(c, class)` (the class as its kept options leave it), packed
/// to the front: each class's options consecutive, in class order.
fn pack(
    opts: &mut Vec<(u32, i64, i64)>,
    classes: &mut Vec<Class>,
    keep: impl Fn(usize) -> bool,
    mut stays: impl FnMut(usize, &Class) -> bool,
) {
    let (mut next, mut kept) = (0, 0);
    for c in 0..classes.len() {
        let mut class = classes[c];
        let start = next;
        for o in class.start..class.end {
            if keep(o) {
                opts[next] = opts[o];
                next += 1;
            }
        }
        (class.start, class.end) = (start, next);
        if stays(c, &class) {
            classes[kept] = class;
            kept += 1;
        } else {
            next = start;
        }
    }
    classes.truncate(kept);
    opts.truncate(next);
}

fn solve_with<S: Source>(
    b: &mut Buffers,
    scratch: &mut Scratch,
    source: &S,
    target: i64,
    bucket: i64,
    memory_limit: usize,
) -> Result<Vec<u32>> {
    let capacity = target / bucket;
    let mut result = Vec::new();
    let mut always: Vec<u32> = Vec::new();
    #[cfg(test)]
    let reducing = !tests::NO_FILTER.get() && !tests::NO_REDUCE.get();
    #[cfg(not(test))]
    let reducing = true;
    // A large list: classes whose bound shows them below the threshold
    // are not read; what the reduction finds then shows whether they can
    // be in a best selection, and if any can, every class is read.
    let mut skip = match reducing && S::BOUNDS {
        true => threshold(source, bucket, capacity, b, &mut scratch.reduce),
        false => None,
    };
    let Buffers {
        opts,
        classes: dp_classes,
        raw,
        own,
        plain,
        kept,
        sizing,
        skipped,
        spare,
    } = b;
    // What the reduction found: lambda and the gap.
    let mut found;
    loop {
        result.clear();
        always.clear();
        opts.clear();
        dp_classes.clear();
        skipped.clear();
        for class in 0..source.len() {
            if let Some(theta) = skip {
                if let Some((e, d)) = source.bound(class, bucket).filter(|b| b.0 < theta) {
                    skipped.push((e, d));
                    continue;
                }
            }
            raw.clear();
            source.options(class, raw);
            if raw[0].1 == 0 {
                // A zero-token item: always included, as pushed.
                result.push(raw[0].0);
                continue;
            }
            let zero = class_options(raw, own, bucket, capacity);
            if own.is_empty() {
                if let Some(z) = zero {
                    always.push(z);
                }
                continue;
            }
            let start = opts.len();
            opts.extend_from_slice(own);
            dp_classes.push(Class {
                zero,
                start,
                end: opts.len(),
            });
        }
        // Options in no best selection (`reduce.rs`).
        found = match reducing && !dp_classes.is_empty() {
            true => reduce(
                dp_classes.iter().map(|c| (c.start, c.end)),
                opts,
                capacity,
                &mut scratch.reduce,
            ),
            false => None,
        };
        let Some(theta) = skip else { break };
        if found.is_some_and(|(lambda, gap)| unread_hopeless(skipped, theta, lambda, gap)) {
            break;
        }
        skip = None;
        #[cfg(test)]
        tests::RERUNS.set(tests::RERUNS.get() + 1);
    }
    #[cfg(test)]
    tests::SKIPPED.set(skipped.len());
    // A class left with no option stays when it has one of weight 0
    // (reconstruction takes it there, in its order), else it goes.
    let stays = |_: usize, c: &Class| c.start < c.end || c.zero.is_some();
    let mut rest = Rest {
        plain,
        kept,
        sizing,
        capacity,
        bucket,
        memory_limit,
    };
    if found.is_some() {
        let r = &scratch.reduce;
        // First the options a guess of the best value leaves (`reduce.rs`):
        // when the best selection of them reaches the guess, every other
        // option is in no best selection and the choice is the same as
        // over those the gap leaves; else those.
        #[cfg(test)]
        let guessing = !tests::NO_GUESS.get();
        #[cfg(not(test))]
        let guessing = true;
        if guessing && worth_guessing(count(&r.tight), count(&r.keep)) {
            let guess = r.guess;
            spare.0.clone_from(opts);
            spare.1.clone_from(dp_classes);
            let tight = std::mem::take(&mut scratch.reduce.tight);
            pack(opts, dp_classes, |o| tight[o], stays);
            scratch.reduce.tight = tight;
            let mark = result.len();
            // (A table over the memory limit: so is the full one, whose
            // error says what it needs.)
            let held = rest
                .run(scratch, opts, dp_classes, &mut result)
                .is_ok_and(|value| value as f64 >= guess);
            #[cfg(test)]
            tests::GUESSES.with(|g| g.set((g.get().0 + 1, g.get().1 + usize::from(held))));
            if held {
                result.extend(always);
                return Ok(result);
            }
            result.truncate(mark);
            opts.clone_from(&spare.0);
            dp_classes.clone_from(&spare.1);
        }
        let keep = &scratch.reduce.keep;
        pack(opts, dp_classes, |o| keep[o], stays);
    }
    rest.run(scratch, opts, dp_classes, &mut result)?;
    result.extend(always);
    Ok(result)
}

/// How many of `v` are true.
fn count(v: &[bool]) -> usize {
    v.iter().filter(|&&b| b).count()
}

/// Whether a guess that leaves `tight` options of the `keep` the gap
/// leaves is worth its risk: at most two thirds (when it fails, the DP
/// runs again, after a first run over at most two thirds as many rows).
fn worth_guessing(tight: usize, keep: usize) -> bool {
    #[cfg(test)]
    if tests::EAGER.get() {
        return true;
    }
    3 * tight <= 2 * keep
}

/// What follows the reduction: the row filter and the DP, with the
/// buffers they use and the call's limits.
struct Rest<'a> {
    plain: &'a mut Vec<bool>,
    kept: &'a mut Vec<bool>,
    sizing: &'a mut Vec<(u32, i64, i64)>,
    capacity: i64,
    bucket: i64,
    memory_limit: usize,
}

impl Rest<'_> {
    /// The row filter over the classes that are one plain row, then the
    /// DP over `dp_classes` (their chosen options appended to `result`):
    /// the value chosen.
    fn run(
        &mut self,
        scratch: &mut Scratch,
        opts: &mut Vec<(u32, i64, i64)>,
        dp_classes: &mut Vec<Class>,
        result: &mut Vec<u32>,
    ) -> Result<i64> {
        let (plain, kept, capacity) = (&mut *self.plain, &mut *self.kept, self.capacity);
        plain.clear();
        plain.extend(
            dp_classes
                .iter()
                .map(|c| c.zero.is_none() && c.end - c.start == 1),
        );
        let rows = &mut scratch.rows;
        rows.clear();
        rows.extend(
            dp_classes
                .iter()
                .enumerate()
                .filter(|&(c, _)| plain[c])
                .map(|(c, k)| (c as u32, opts[k.start].1, opts[k.start].2)),
        );
        #[cfg(test)]
        if tests::NO_FILTER.get() {
            rows.clear();
        }
        if !rows.is_empty() {
            kept.clear();
            kept.resize(dp_classes.len(), false);
            drop_dominated(rows, capacity, &mut scratch.filter);
            rows.iter().for_each(|r| kept[r.0 as usize] = true);
            // The kept classes' options, consecutive again: one keep row
            // each.
            pack(opts, dp_classes, |_| true, |c, _| !plain[c] || kept[c]);
        }
        if dp_classes.is_empty() {
            return Ok(0);
        }
        run(
            scratch,
            dp_classes,
            opts,
            self.sizing,
            capacity,
            self.bucket,
            self.memory_limit,
            result,
        )
    }
}

/// Step 4 and 5 for `dp_classes`: the table, the rows, the reconstruction
/// (appended to `result`).
#[allow(clippy::too_many_arguments)]
fn run(
    scratch: &mut Scratch,
    dp_classes: &[Class],
    opts: &[(u32, i64, i64)],
    sizing: &mut Vec<(u32, i64, i64)>,
    capacity: i64,
    bucket: i64,
    memory_limit: usize,
    result: &mut Vec<u32>,
) -> Result<i64> {
    // The table is sized as for one row per kept option; its total value is
    // that of the best option of each class.
    sizing.clear();
    for c in dp_classes {
        let best = opts[c.start..c.end].iter().map(|o| o.2).max().unwrap_or(0);
        for (k, o) in opts[c.start..c.end].iter().enumerate() {
            sizing.push((o.0, o.1, if k == 0 { best } else { 0 }));
        }
    }
    #[cfg(test)]
    tests::ROWS.set(sizing.len());
    let size = TableSize::of(sizing, capacity, bucket, memory_limit)?;
    let Scratch {
        keep,
        dp32,
        dp_bits32,
        dp64,
        ..
    } = scratch;
    let keep = grow(keep, sizing.len() * size.words, size.bytes)?;
    let (words, max_weight, needed) = (size.words, size.max_weight, size.bytes);
    let plan = Plan {
        kernel: Kernel::selected(),
        classes: dp_classes,
        opts,
        words,
        max_weight,
        capacity: capacity as usize,
    };
    match size.total_value {
        Some(total) if kernel::use_bits32(plan.kernel, total) => {
            let dp = dp_array(dp_bits32, words, max_weight, needed)?;
            plan.rows(keep, dp, Bits32::new);
        }
        Some(total) if total <= i32::MAX as i64 => {
            let dp = dp_array(dp32, words, max_weight, needed)?;
            plan.rows(keep, dp, |v| v as i32);
        }
        Some(_) => {
            let dp = dp_array(dp64, words, max_weight, needed)?;
            plan.rows(keep, dp, |v| v);
        }
        None => {
            let dp = dp_array(dp64, words, max_weight, needed)?;
            for c in dp_classes {
                let o: Vec<(usize, i64)> = opts[c.start..c.end]
                    .iter()
                    .map(|o| (o.1 as usize, o.2))
                    .collect();
                let rows = &mut keep[c.start * words..c.end * words];
                kernel::choice_row_saturating(dp, max_weight, rows, words, &o);
            }
        }
    }
    // Step 5: the last option whose keep bit is set at the remaining
    // capacity; none set, the class's zero-weight option if it has one.
    let mut w = capacity as usize;
    let mut value = 0i64;
    for c in dp_classes.iter().rev() {
        let set = (c.start..c.end)
            .rev()
            .find(|&r| keep[r * words + (w >> 6)] >> (w & 63) & 1 == 1);
        match set {
            Some(r) => {
                result.push(opts[r].0);
                w -= opts[r].1 as usize;
                value = value.saturating_add(opts[r].2);
            }
            None => {
                if let Some(z) = c.zero {
                    result.push(z);
                }
            }
        }
    }
    Ok(value)
}

struct Plan<'a> {
    kernel: Kernel,
    classes: &'a [Class],
    opts: &'a [(u32, i64, i64)],
    words: usize,
    max_weight: usize,
    capacity: usize,
}

impl Plan<'_> {
    /// The DP rows: consecutive one-option classes two at a time through
    /// the fused kernels, others through the choice kernels; each from the
    /// lowest block reconstruction can read (see `rows.rs`).
    fn rows<T: Lane>(&self, keep: &mut [u64], dp: &mut [T], lane: impl Fn(i64) -> T) {
        let words = self.words;
        let heaviest = |c: &Class| {
            self.opts[c.start..c.end]
                .iter()
                .map(|o| o.1)
                .max()
                .unwrap_or(0)
        };
        let mut after: u128 = self.classes.iter().map(|c| heaviest(c) as u128).sum();
        let from = |after: u128| (self.capacity as u128).saturating_sub(after) as usize / 64;
        let plain = |c: &Class| c.end - c.start == 1;
        let mut lanes: Vec<(usize, T)> = Vec::new();
        let mut k = 0;
        while k < self.classes.len() {
            let a = &self.classes[k];
            after -= heaviest(a) as u128;
            let start = from(after);
            #[cfg(test)]
            tests::PASSES.with(|p| p.borrow_mut().push(start));
            let row = &mut keep[a.start * words..];
            if plain(a) && self.classes.get(k + 1).is_some_and(plain) {
                let b = &self.classes[k + 1];
                debug_assert_eq!(b.start, a.end);
                let (keep_a, rest) = row.split_at_mut(words);
                let oa = self.opts[a.start];
                let ob = self.opts[b.start];
                after -= ob.1 as u128;
                #[cfg(test)]
                tests::PASSES.with(|p| p.borrow_mut().push(usize::MAX));
                kernel::rows(
                    self.kernel,
                    dp,
                    self.max_weight,
                    keep_a,
                    (oa.1 as usize, lane(oa.2)),
                    Some((&mut rest[..words], (ob.1 as usize, lane(ob.2)))),
                    start,
                );
                k += 2;
                continue;
            }
            lanes.clear();
            lanes.extend(
                self.opts[a.start..a.end]
                    .iter()
                    .map(|o| (o.1 as usize, lane(o.2))),
            );
            let o = &lanes[..];
            let rows = &mut row[..(a.end - a.start) * words];
            if o.is_empty() {
                // A class `reduce.rs` left with only its option of weight 0.
            } else if o.len() == 1 {
                kernel::rows(self.kernel, dp, self.max_weight, rows, o[0], None, start);
            } else {
                kernel::choice_row(self.kernel, dp, self.max_weight, rows, words, o, start);
            }
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::Options;
    use std::cell::Cell;

    thread_local! {
        /// Test hook: leave both filters and the reduction out.
        pub(super) static NO_FILTER: Cell<bool> = const { Cell::new(false) };
        /// Test hook: leave the reduction (`reduce.rs`) out.
        pub(super) static NO_REDUCE: Cell<bool> = const { Cell::new(false) };
        /// No guess of the best value before the reduction's gap.
        pub(super) static NO_GUESS: Cell<bool> = const { Cell::new(false) };
        /// A guess tried whenever the reduction ran (not only by the
        /// rule).
        pub(super) static EAGER: Cell<bool> = const { Cell::new(false) };
        /// Guesses tried and guesses that held, over calls.
        pub(super) static GUESSES: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
        /// Classes the last call did not read, and calls that read every
        /// class after all.
        pub(super) static SKIPPED: Cell<usize> = const { Cell::new(0) };
        pub(super) static RERUNS: Cell<usize> = const { Cell::new(0) };
        /// The option rows of the last table built on this thread.
        pub(super) static ROWS: Cell<usize> = const { Cell::new(0) };
        /// Each DP pass's first block, and `usize::MAX` after a pass that
        /// ran two single-option rows.
        pub(super) static PASSES: std::cell::RefCell<Vec<usize>> = const {
            std::cell::RefCell::new(Vec::new())
        };
    }

    /// (tokens, score, variants as (tokens, value)) per item.
    type Spec = Vec<(i64, f64, Vec<(i64, f64)>)>;

    /// The knapsack over the options of `spec` (Sort order): the total
    /// value chosen, and the option rows of its table.
    fn run(spec: &Spec, target: i64, bucket: i64, filter: bool) -> (i64, usize) {
        let (value, rows, _) = chosen(spec, target, bucket, !filter, !filter);
        (value, rows)
    }

    /// As [`run`] with the filters and without the reduction: what the
    /// filters alone keep.
    fn filtered(spec: &Spec, target: i64, bucket: i64) -> (i64, usize) {
        let (value, rows, _) = chosen(spec, target, bucket, false, true);
        (value, rows)
    }

    /// As [`run`], with the filters and the reduction each left out or
    /// not, also returning the options chosen, in order.
    fn chosen(
        spec: &Spec,
        target: i64,
        bucket: i64,
        no_filter: bool,
        no_reduce: bool,
    ) -> (i64, usize, Vec<u32>) {
        let it = crate::choice::test_items(spec);
        let view = it.view();
        let cands = crate::sort::sort_stage(&view);
        let one = |p: usize| std::slice::from_ref(&cands[p]);
        let o = Options::build(&it, view, view, &cands, one);
        let options = o.view(view);
        let all: Vec<u32> = (0..o.len() as u32).collect();
        NO_FILTER.set(no_filter);
        NO_REDUCE.set(no_reduce);
        ROWS.set(0);
        let chosen = knapsack(&options, &all, target, bucket, usize::MAX).unwrap();
        NO_FILTER.set(false);
        NO_REDUCE.set(false);
        let value = chosen.iter().map(|&k| options.value(k, |_| 0)).sum();
        (value, ROWS.get(), chosen)
    }

    /// What the options path chooses for the items `cands` (Sort order)
    /// of `it`: [`knapsack`] over the options built for them, expanded.
    fn by_options(it: &Items, cands: &[u32], target: i64, bucket: i64) -> Vec<Chosen> {
        let view = it.view();
        let one = |p: usize| std::slice::from_ref(&cands[p]);
        let o = Options::build(it, view, view, cands, one);
        let all: Vec<u32> = (0..o.len() as u32).collect();
        let chosen = knapsack(&o.view(view), &all, target, bucket, usize::MAX).unwrap();
        o.expand(view, &chosen, one)
    }

    /// Seeded lists for the filters and the reduction: many items for a
    /// small budget, scores in `levels` steps (few levels: many ties), 0
    /// to 2 variants each, some zero-token variants.
    fn seeded_spec(rng: &mut crate::testing::Rng, levels: u64) -> Spec {
        (0..100 + rng.below(400))
            .map(|_| {
                let t = 1 + rng.below(300) as i64;
                let variants = (0..rng.below(3))
                    .map(|_| {
                        (
                            rng.below(t as u64 + 1).max(rng.below(2)) as i64,
                            (1 + rng.below(10)) as f64 / 10.0,
                        )
                    })
                    .collect();
                (t, rng.below(levels) as f64 / levels as f64, variants)
            })
            .collect()
    }

    #[test]
    fn items_straight_from_the_store_choose_as_their_options() {
        let mut rng = crate::testing::Rng(0x0027_D1EC);
        for case in 0..60 {
            let mut spec = seeded_spec(&mut rng, [10, 1000][case % 2]);
            // Zero-token items (never options of their variants) and
            // negative-token ones (whose variants are options).
            let n = spec.len();
            for k in 0..n / 10 {
                spec[k * 7 % n].0 = [0, -3][k % 2];
            }
            let target = 1 + rng.below(3000) as i64;
            let bucket = [1, 7, 10][case % 3];
            let it = crate::choice::test_items(&spec);
            let view = it.view();
            let cands = crate::sort::sort_stage(&view);
            let want = by_options(&it, &cands, target, bucket);
            let got = knapsack_items(&it, &view, &cands, target, bucket, usize::MAX);
            assert_eq!(got.unwrap().unwrap(), want, "case {case}");
        }
    }

    /// Large lists (classes left unread by their bound): the same choice
    /// as the options path (which reads every class) and as without the
    /// reduction; some calls leave classes unread, some find they must
    /// read them all.
    #[test]
    fn classes_left_unread_change_no_choice() {
        let mut rng = crate::testing::Rng(0x0027_5EED);
        let (mut unread, mut reruns) = (0, 0);
        for case in 0..12 {
            let n = SPLIT_MIN + rng.below(4000) as usize;
            let spec: Spec = (0..n)
                .map(|i| {
                    let t = [1 + rng.below(1000) as i64, 0, -4][(rng.below(200) as usize).min(2)];
                    let mut variants = vec![((t + 2) / 3, 0.5), ((t + 9) / 10, 0.15)];
                    if i % 3 == 0 {
                        variants =
                            vec![(1 + rng.below(50) as i64, (1 + rng.below(10)) as f64 / 10.0)];
                    }
                    if rng.below(500) == 0 {
                        variants.push((0, 0.01));
                    }
                    let levels = [10_000, 10][case % 2];
                    (t, rng.below(levels) as f64 / levels as f64, variants)
                })
                .filter(|v| v.0 > 0 || v.2.iter().all(|w| w.0 >= 0))
                .map(|(t, s, v)| (t, s, v.into_iter().map(|(a, b)| (a.max(0), b)).collect()))
                .collect();
            let target = [128_000, 16_000, 2_000, 400_000][case % 4];
            let bucket = [100, 1, 10][case % 3];
            let it = crate::choice::test_items(&spec);
            let view = it.view();
            let cands = crate::sort::sort_stage(&view);
            let want = by_options(&it, &cands, target, bucket);
            RERUNS.set(0);
            let got = knapsack_items(&it, &view, &cands, target, bucket, usize::MAX);
            assert_eq!(got.unwrap().unwrap(), want, "case {case}");
            unread += SKIPPED.get();
            reruns += RERUNS.get();
            NO_REDUCE.set(true);
            let before = RERUNS.get();
            let plain = knapsack_items(&it, &view, &cands, target, bucket, usize::MAX);
            NO_REDUCE.set(false);
            assert_eq!(plain.unwrap().unwrap(), want, "case {case}");
            // Without the reduction every class is read, at once.
            assert_eq!((SKIPPED.get(), RERUNS.get()), (0, before), "case {case}");
        }
        assert!(
            unread > 0 && reruns > 0,
            "{unread} classes unread, {reruns} reruns"
        );
    }

    #[test]
    fn no_budget_chooses_nothing_not_even_zero_token_items() {
        let spec: Spec = vec![
            (0, 0.5, vec![]),
            (10, 0.5, vec![(0, 0.5)]),
            (5, 0.9, vec![]),
        ];
        let it = crate::choice::test_items(&spec);
        let view = it.view();
        let cands = crate::sort::sort_stage(&view);
        let one = |p: usize| std::slice::from_ref(&cands[p]);
        let o = Options::build(&it, view, view, &cands, one);
        let all: Vec<u32> = (0..o.len() as u32).collect();
        for target in [0, -5] {
            assert!(knapsack(&o.view(view), &all, target, 1, usize::MAX)
                .unwrap()
                .is_empty());
            let got = knapsack_items(&it, &view, &cands, target, 1, usize::MAX);
            assert!(got.unwrap().unwrap().is_empty(), "{target}");
        }
        // With a budget, the zero-token item and item 1's zero-token variant.
        let got = knapsack_items(&it, &view, &cands, 1, 1, usize::MAX)
            .unwrap()
            .unwrap();
        let got: Vec<(u32, u8)> = got.iter().map(|c| (c.item, c.variant)).collect();
        assert_eq!(got, [(0, 0), (1, 1)]);
        assert!(knapsack(&o.view(view), &[], 10, 1, usize::MAX)
            .unwrap()
            .is_empty());
        assert!(knapsack_items(&it, &view, &[], 10, 1, usize::MAX)
            .unwrap()
            .unwrap()
            .is_empty());
    }

    #[test]
    fn item_bounds_are_the_documented_ones_and_bound_every_option() {
        // Bucket 64; numbers exact in binary. (tokens, score, variants)
        let spec: Spec = vec![
            // Itself 4 buckets worth 5000: 1250 a bucket; variants: share
            // per token max(0.5 / 128, 0.25 / 32) = 1/128, times 64 is 0.5,
            // lightest 32 tokens (1 bucket): 1e4 * 0.5 * 0.5 = 2500.
            (256, 0.5, vec![(128, 0.5), (32, 0.25)]),
            // Itself 10 buckets, 500 a bucket; its variant of 200 tokens (4
            // buckets): 64 / 200 = 0.32 a bucket, but at most 1/4: 1250.
            (640, 0.5, vec![(200, 1.0)]),
            // No option of its own; a variant of 64 tokens: 0.5 * 64 / 64.
            (-3, 0.5, vec![(64, 0.5)]),
            // Itself only: 5000 in one bucket.
            (64, 0.5, vec![]),
            // Always read: zero tokens, or a zero-token variant.
            (0, 0.5, vec![]),
            (100, 0.5, vec![(0, 0.5)]),
        ];
        let it = crate::choice::test_items(&spec);
        let view = it.view();
        let sorted: Vec<u32> = (0..spec.len() as u32).collect();
        let source = OfItems {
            all: &it,
            view: &view,
            sorted: &sorted,
        };
        let slack = 1.0 + 1e-9;
        let got: Vec<Option<(f64, i64)>> = (0..6).map(|c| source.bound(c, 64)).collect();
        assert_eq!(
            got,
            [
                Some((2500.0 * slack, 1)),
                Some((1250.0 * slack, 4)),
                Some((2500.0 * slack, 1)),
                Some((5000.0, 1)),
                None,
                None
            ]
        );
        // On seeded items: every option's value per weight at most the
        // bound, its weight at least it.
        let mut rng = crate::testing::Rng(0x0027_B0D5);
        let spec = seeded_spec(&mut rng, 1000);
        let it = crate::choice::test_items(&spec);
        let view = it.view();
        let sorted: Vec<u32> = (0..spec.len() as u32).collect();
        let source = OfItems {
            all: &it,
            view: &view,
            sorted: &sorted,
        };
        let mut raw = Vec::new();
        for bucket in [1, 7, 100] {
            for c in 0..sorted.len() {
                let Some((e, d)) = source.bound(c, bucket) else {
                    continue;
                };
                raw.clear();
                source.options(c, &mut raw);
                for &(_, t, v) in raw.iter().filter(|o| o.1 > 0) {
                    let w = ceil_div(t, bucket);
                    assert!(
                        v as f64 / w as f64 <= e && w >= d,
                        "class {c} option {t} {v}"
                    );
                }
            }
        }
    }

    #[test]
    fn unread_classes_are_hopeless_only_past_the_gap() {
        // A class of bound (1, 2) at lambda 3: its options' reduced values
        // are at most -2 * (3 - 1) = -4.
        let one = [(1.0, 2)];
        assert!(unread_hopeless(&one, 2.0, 3.0, 3.99));
        assert!(!unread_hopeless(&one, 2.0, 3.0, 4.0), "within the gap");
        assert!(
            unread_hopeless(&one, 3.0, 3.0, 3.99),
            "lambda at the threshold"
        );
        assert!(!unread_hopeless(&one, 3.5, 3.0, 0.0), "lambda below it");
        // At lambda itself, never (not even with no gap: the allowance).
        assert!(!unread_hopeless(&[(3.0, 1)], 2.0, 3.0, 0.0));
        assert!(!unread_hopeless(&[(1.0, 2), (2.9, 1)], 2.0, 3.0, 1.0));
        assert!(unread_hopeless(&[], 2.0, 2.0, 1e9));
    }

    #[test]
    fn buffers_count_their_bytes() {
        let b = Buffers {
            opts: Vec::with_capacity(1),
            raw: Vec::with_capacity(2),
            own: Vec::with_capacity(4),
            sizing: Vec::with_capacity(8),
            classes: Vec::with_capacity(16),
            plain: Vec::with_capacity(32),
            kept: Vec::with_capacity(64),
            skipped: Vec::with_capacity(128),
            spare: (Vec::with_capacity(256), Vec::with_capacity(512)),
        };
        let class = std::mem::size_of::<Class>();
        let spare = 256 * 24 + 512 * class;
        assert_eq!(b.bytes(), 15 * 24 + 16 * class + 32 + 64 + 128 * 16 + spare);
    }

    #[test]
    fn scratch_kept_between_calls_counts_the_variant_buffers() {
        // Past 64 MiB in either one's buffers: released after the call.
        let mut s = Scratch::default();
        s.choice.opts = Vec::with_capacity(3 << 20);
        s.trim();
        assert_eq!(s.choice.opts.capacity(), 0);
        s.reduce.keep = Vec::with_capacity(70 << 20);
        s.trim();
        assert_eq!(s.reduce.keep.capacity(), 0);
        // Small ones are kept.
        s.choice.opts = Vec::with_capacity(1000);
        s.reduce.keep = Vec::with_capacity(1000);
        s.trim();
        assert_eq!(
            (s.choice.opts.capacity(), s.reduce.keep.capacity()),
            (1000, 1000)
        );
    }

    #[test]
    fn the_reduction_drops_options_and_changes_no_choice() {
        let mut rng = crate::testing::Rng(0x0027_4ED0);
        let (mut kept, mut all) = (0, 0);
        for case in 0..80 {
            let spec = seeded_spec(&mut rng, [10, 1000][case % 2]);
            let target = 1 + rng.below(3000) as i64;
            let bucket = [1, 7, 10][case % 3];
            let (v, rows, with) = chosen(&spec, target, bucket, false, false);
            let (w, every, without) = chosen(&spec, target, bucket, false, true);
            // The same options in the same order, not only the same value.
            assert_eq!((v, &with), (w, &without), "case {case}");
            assert!(rows <= every, "case {case}");
            (kept, all) = (kept + rows, all + every);
        }
        // Of what the filters leave, the reduction takes more than half.
        assert!(kept * 2 < all, "{kept} of {all} option rows kept");
    }

    /// Over the memory limit, a guess's smaller table too: the error is
    /// the full table's, as without the guess.
    #[test]
    fn over_the_memory_limit_the_error_is_the_full_tables() {
        let mut rng = crate::testing::Rng(0x0027_03E3);
        let spec = seeded_spec(&mut rng, 1000);
        let it = crate::choice::test_items(&spec);
        let view = it.view();
        let cands = crate::sort::sort_stage(&view);
        let one = |p: usize| std::slice::from_ref(&cands[p]);
        let o = Options::build(&it, view, view, &cands, one);
        let all: Vec<u32> = (0..o.len() as u32).collect();
        let error = |guess: bool| {
            EAGER.set(guess);
            NO_GUESS.set(!guess);
            let before = GUESSES.get().0;
            let e = knapsack(&o.view(view), &all, 1500, 1, 64).unwrap_err();
            EAGER.set(false);
            NO_GUESS.set(false);
            (e.to_string(), GUESSES.get().0 - before)
        };
        let (with, tried) = error(true);
        let (without, _) = error(false);
        assert_eq!((with, tried), (without.clone(), 1));
        assert!(
            without.contains("over the memory limit of 64 bytes"),
            "{without}"
        );
    }

    #[test]
    fn a_guess_is_tried_when_it_leaves_two_thirds_of_the_options_or_fewer() {
        assert!(worth_guessing(66, 99) && worth_guessing(0, 1));
        assert!(!worth_guessing(67, 99) && !worth_guessing(1, 1));
    }

    /// The guess of the best value (`reduce.rs`, `GUESS`): the same
    /// options chosen in the same order with it, without it and without
    /// the reduction, on seeded lists where it holds and where it fails
    /// (then the DP runs again over what the gap leaves; tried whenever
    /// the reduction ran, as well as by the rule); fewer rows when it
    /// holds.
    #[test]
    fn a_guess_of_the_best_value_changes_no_choice() {
        let mut tries = Vec::new();
        for eager in [true, false] {
            let mut rng = crate::testing::Rng(0x0027_6E55);
            EAGER.set(eager);
            GUESSES.set((0, 0));
            let (mut fewer, mut held) = (0, 0);
            for case in 0..120 {
                let spec = seeded_spec(&mut rng, [10, 1000][case % 2]);
                let target = 1 + rng.below(3000) as i64;
                let bucket = [1, 7, 10][case % 3];
                let before = GUESSES.get();
                let (v, rows, with) = chosen(&spec, target, bucket, false, false);
                let after = GUESSES.get();
                NO_GUESS.set(true);
                let (w, every, without) = chosen(&spec, target, bucket, false, false);
                NO_GUESS.set(false);
                let (x, _, plain) = chosen(&spec, target, bucket, false, true);
                assert_eq!((v, &with), (w, &without), "case {case}");
                assert_eq!((v, &with), (x, &plain), "case {case}");
                if after.1 > before.1 {
                    held += 1;
                    fewer += usize::from(rows < every);
                }
            }
            EAGER.set(false);
            let (tried, _) = GUESSES.get();
            assert!(held > 0, "eager {eager}: none of {tried} guesses held");
            assert!(!eager || tried > held, "{held} of {tried} guesses held");
            assert_eq!(fewer, held, "fewer rows each time it held");
            tries.push(tried);
        }
        // The rule tries it on fewer of the same lists.
        assert!(tries[1] < tries[0], "{tries:?}");
    }

    #[test]
    fn the_filters_and_the_reduction_drop_options_and_change_no_choice() {
        let mut rng = crate::testing::Rng(0x0027_F117);
        let (mut kept, mut all) = (0, 0);
        for case in 0..60 {
            // Many items for a small budget: most options cannot matter.
            let spec = seeded_spec(&mut rng, 1000);
            let target = 50 + rng.below(2000) as i64;
            let bucket = [1, 10][case % 2];
            // The filters alone, then with the reduction, against neither:
            // the same options chosen in the same order.
            let (with, _, a) = chosen(&spec, target, bucket, false, true);
            let (reduced, rows, b) = chosen(&spec, target, bucket, false, false);
            let (without, every, c) = chosen(&spec, target, bucket, true, true);
            assert_eq!((with, reduced), (without, without), "case {case}");
            assert_eq!((&a, &b), (&c, &c), "case {case}");
            assert!(rows <= every, "case {case}");
            (kept, all) = (kept + rows, all + every);
        }
        // They remove most option rows of lists this much larger than
        // their budgets.
        assert!(kept * 2 < all, "{kept} of {all} option rows kept");
    }

    #[test]
    fn options_of_no_value_or_dominated_in_their_class_take_no_row() {
        // Item 0: as pushed (100 tokens, 5000), a variant worth nothing
        // (value 0), one as heavy and worth as much as... less (dominated:
        // 100 tokens, 4000) and one of the same value but heavier than
        // another (20 and 30 tokens at 2500): rows for 100/5000 and 20/2500.
        let spec: Spec = vec![(
            100,
            0.5,
            vec![(10, 0.00001), (100, 0.8), (20, 0.5), (30, 0.5)],
        )];
        let (value, rows) = filtered(&spec, 1000, 1);
        assert_eq!((value, rows), (5000, 2));
        let (value, rows) = filtered(&spec, 25, 1);
        assert_eq!(
            (value, rows),
            (2500, 1),
            "the 100-token ones are over the capacity"
        );
        // A total value past i32 (a single-option row worth about 2^32,
        // which as an i32 would be next to nothing, beside a small
        // two-option one) runs in i64 lanes: the sizing counts each class's
        // best option once, whatever its number of options.
        let big = 429_496.729_7;
        let spec: Spec = vec![(10, big, vec![]), (10, 0.5, vec![(5, 0.5)])];
        assert_eq!(run(&spec, 10, 1, true).0, (big * 10000.0) as i64);
        assert_eq!(run(&spec, 15, 1, true).0, (big * 10000.0) as i64 + 2500);
    }

    #[test]
    fn single_option_rows_run_two_a_pass_from_the_lowest_block_that_matters() {
        // Capacity 1000 (16 keep words): A and B, one option of 100 tokens
        // each, share a pass; C (50 or 100 tokens) has its own. Reconstruction
        // reads A's bits only at 1000 minus what B and C may take (200) and
        // up: block 12; C's at 1000 and up: block 15.
        let spec: Spec = vec![
            (100, 0.9, vec![]),
            (100, 0.8, vec![]),
            (100, 0.7, vec![(50, 0.5)]),
        ];
        PASSES.with(|p| p.borrow_mut().clear());
        let (value, _) = filtered(&spec, 1000, 1);
        assert_eq!(value, 9000 + 8000 + 7000);
        assert_eq!(
            PASSES.with(|p| p.borrow().clone()),
            vec![12, usize::MAX, 15]
        );
    }

    #[test]
    fn values_past_i64_run_in_saturating_rows() {
        // Scores so large every value saturates at i64::MAX: the total
        // overflows and the rows saturate. A's variant (5 tokens, i64::MAX)
        // dominates A as pushed (10 tokens, the same); with it, B adds
        // nothing a saturated cell can show, so A's variant alone is best.
        let spec: Spec = vec![(10, 1e300, vec![(5, 0.5)]), (5, 1e300, vec![])];
        let it = crate::choice::test_items(&spec);
        let view = it.view();
        let cands: Vec<u32> = vec![0, 1];
        let one = |p: usize| std::slice::from_ref(&cands[p]);
        let o = Options::build(&it, view, view, &cands, one);
        let all: Vec<u32> = (0..o.len() as u32).collect();
        // 100 tokens: two keep words a row, so each class's rows sit where
        // they belong only if sliced at `words` per option.
        let chosen = knapsack(&o.view(view), &all, 100, 1, usize::MAX).unwrap();
        let got = o.expand(view, &chosen, one);
        let mut got: Vec<(u32, u8)> = got.iter().map(|c| (c.item, c.variant)).collect();
        got.sort_unstable();
        assert_eq!(got, vec![(0, 1)]);
        // At 5 tokens: the first of the two equal options in candidate order.
        let chosen = knapsack(&o.view(view), &all, 5, 1, usize::MAX).unwrap();
        assert_eq!(o.expand(view, &chosen, one)[0].item, 0);
    }

    #[test]
    fn the_row_filter_still_drops_plain_rows_out_of_score_order() {
        // A low score first, then a high one: the first options' values
        // rise, so the option filter stops; the row filter of `filter.rs`
        // still keeps one of the fifty identical 10-token rows (capacity
        // 10 holds one of them).
        let mut spec: Spec = vec![(1, 0.1, vec![]), (2, 0.9, vec![(1, 0.5)])];
        spec.extend((0..50).map(|_| (10, 0.5, vec![])));
        let it = crate::choice::test_items(&spec);
        let view = it.view();
        let cands: Vec<u32> = (0..spec.len() as u32).collect();
        let one = |p: usize| std::slice::from_ref(&cands[p]);
        let o = Options::build(&it, view, view, &cands, one);
        let all: Vec<u32> = (0..o.len() as u32).collect();
        ROWS.set(0);
        NO_REDUCE.set(true);
        knapsack(&o.view(view), &all, 10, 1, usize::MAX).unwrap();
        // Item 0, item 1's two options, one of the fifty.
        assert_eq!(ROWS.get(), 4);
        NO_FILTER.set(true);
        knapsack(&o.view(view), &all, 10, 1, usize::MAX).unwrap();
        NO_FILTER.set(false);
        NO_REDUCE.set(false);
        assert_eq!(ROWS.get(), 53);
    }
}
