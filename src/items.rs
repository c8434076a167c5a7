//! The scored candidates, stored as parallel arrays (structure of arrays) so
//! that slicers work on indices and never clone item data.

use crate::error::{invalid, Error, Result};
use crate::kind::{self, KindTable, DEFAULT_KIND};

/// Largest number of items one set can hold (indices are stored as `u32`).
pub const MAX_ITEMS: usize = u32::MAX as usize;

/// The name of an item field in messages: "kinds[3]", or "kind" for one item.
/// A field of one pushed item, named as the call that pushed it spells it:
/// the single-item parameter (`score`) or the `push_many` array element
/// (`scores[3]`).
struct At<'a> {
    /// (parameter of `cupel_items_push`, array of `cupel_items_push_many`)
    field: (&'a str, &'a str),
    index: Option<usize>,
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}[{i}]", self.field.1),
            None => f.write_str(self.field.0),
        }
    }
}

/// The item store: the columns every slice needs (tokens, pushed score,
/// kind) and the optional ContextItem attributes the other pipeline stages
/// read ([`Attrs`]). Structure of arrays, so stages work on indices and
/// never clone item data.
#[derive(Debug, Clone, Default)]
pub struct Items {
    tokens: Vec<i64>,
    scores: Vec<f64>,
    kinds: Vec<u32>,
    kind_table: KindTable,
    attrs: Attrs,
    /// No item has fewer tokens, of those with 0 or more (a bound: not
    /// raised when items are taken back); `None` before the first.
    fewest: Option<i64>,
}

/// The ContextItem attributes beyond tokens, score and kind. Each column is
/// empty until an item's attribute is first set, then grown to the item
/// count: items pushed later, or never set, read as absent. A list that
/// uses none of them pays nothing at push.
#[derive(Debug, Clone, Default)]
pub struct Attrs {
    content: Vec<Option<Box<str>>>,
    timestamp: Vec<Option<i64>>,
    priority: Vec<Option<i64>>,
    pinned: Vec<bool>,
    hint: Vec<Option<f64>>,
    source: Vec<Option<Box<str>>>,
    tags: Vec<Vec<Box<str>>>,
    metadata: Vec<Vec<(Box<str>, Box<str>)>>,
    /// Keep-together group id (0: none). See [`crate::group`].
    group: Vec<u64>,
    /// Smaller stand-ins of each item, variant `v` at `[v - 1]`
    /// (`crate::choice`).
    variants: Vec<Vec<Variant>>,
    /// Where each item's variants sit in `flat` (first, count).
    runs: Vec<(u32, u32)>,
    /// What bounds each item's variants, kept as they are added
    /// (GreedySlice passes over most items on these alone): the largest
    /// share of the score per token any of them keeps (infinite for a
    /// zero-token variant; 0.0 for none) and the fewest tokens any of them
    /// has (`i64::MAX` for none; the column grows with that).
    share_per_token: Vec<f64>,
    lightest: Vec<i64>,
    /// A bound on the score per token of every option of each item (the
    /// item as pushed and its variants), per unit of its score: the larger
    /// of 1 / its tokens and that largest share per token, as an `f32`
    /// rounded up ([`own_reach`] for an item without variants). Grown to
    /// the items as variants are added: GreedySlice's split reads it and
    /// the scores alone, 12 bytes an item.
    reach: Vec<f32>,
    /// With the pushed scores: a bound on the efficiency of every hull
    /// step of each item, its score times its reach, with an allowance of
    /// 1e-9 for rounding, as an `f32` rounded up ([`peak`] past the
    /// column): GreedySlice's split over the pushed scores reads it alone,
    /// 4 bytes an item.
    peak: Vec<f32>,
    /// With the pushed scores: [`first_leading`] of each item, the fewest
    /// and the most in a `u16` each ([`lead16`]; past the column,
    /// computed): GreedySlice passes over the candidates whose first step
    /// cannot fit on these 4 bytes, read beside [`Attrs::peak`].
    lead: Vec<(u16, u16)>,
    /// The fewest and most tokens of the variants that keep that largest
    /// share per token, within a relative 1e-9 (`(i64::MAX, i64::MIN)` for
    /// none): the options a first step of GreedySlice may take.
    leading: Vec<(i64, i64)>,
    /// Every item's variants as (tokens, share of the score), each item's
    /// consecutive from its `runs` entry: what the slicers read, in one
    /// column rather than a list per item. Runs left behind when an item's
    /// variants move to the end are garbage until [`Attrs::compact`].
    flat: Vec<(i64, f64)>,
    /// How many entries of `flat` are some item's.
    live: usize,
    /// No variant has fewer tokens (a bound: not raised when items are
    /// taken back); `None` before the first variant.
    fewest: Option<i64>,
    /// How an item may be cut down to fit (`crate::choice::fill`).
    truncatable: Vec<Option<Truncatable>>,
    /// A session's identity key (0: none; `crate::session`).
    key: Vec<u64>,
    /// Expected to change every turn: a session places it last.
    volatile: Vec<bool>,
}

/// Largest number of variants one item can have: option numbers (0 for the
/// item as pushed) fit in a byte.
pub const MAX_VARIANTS: usize = 255;

/// A smaller stand-in for an item: a summary, a digest, a placeholder.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// Tokens it adds to the context (>= 0; may exceed the item's).
    pub tokens: i64,
    /// The share of the item's score it keeps, in (0, 1].
    pub value: f64,
    pub content: Option<Box<str>>,
}

impl Attrs {
    /// Appends a variant of item `i` to the flat column, first moving the
    /// item's run to the end when another's follows it.
    fn push_flat(&mut self, i: usize, (tokens, value): (i64, f64), own: (&[i64], &[f64])) {
        let len = self.runs.len().max(i + 1);
        let r = &mut grown(&mut self.runs, len)[i];
        let (first, count) = (r.0 as usize, r.1 as usize);
        if count != 0 && first + count != self.flat.len() {
            r.0 = self.flat.len() as u32;
            self.flat.extend_from_within(first..first + count);
        } else if count == 0 {
            r.0 = self.flat.len() as u32;
        }
        self.flat.push((tokens, value));
        r.1 += 1;
        let share = &mut grown(&mut self.share_per_token, len)[i];
        *share = share.max(per_token(tokens, value));
        if self.lightest.len() < len {
            self.lightest.resize(len, i64::MAX);
        }
        self.lightest[i] = self.lightest[i].min(tokens);
        let start = self.reach.len().min(len);
        self.reach
            .extend(own.0[start..len].iter().map(|&t| own_reach(t)));
        self.reach[i] = self.reach[i].max(up32(*share));
        let start = self.peak.len().min(len);
        let peaks = (start..len).map(|k| peak(own.1[k], self.reach[k]));
        self.peak.extend(peaks);
        self.peak[i] = peak(own.1[i], self.reach[i]);
        if self.leading.len() < len {
            self.leading.resize(len, (i64::MAX, i64::MIN));
        }
        let (best, (first, count)) = (*share, (r.0 as usize, r.1 as usize));
        self.leading[i] = (self.flat[first..first + count].iter())
            .filter(|&&(t, v)| per_token(t, v) >= best * (1.0 - 1e-9))
            .fold((i64::MAX, i64::MIN), |(lo, hi), &(t, _)| {
                (lo.min(t), hi.max(t))
            });
        let start = self.lead.len().min(len);
        let lead = |k: usize| {
            let (spt, leading) = (self.share_per_token[k], self.leading[k]);
            lead16(first_leading(own.0[k], own.1[k], spt, || leading))
        };
        self.lead.extend((start..len).map(lead));
        self.lead[i] = lead(i);
        self.fewest = Some(self.fewest.map_or(tokens, |f| f.min(tokens)));
        self.live += 1;
        self.compact();
    }

    /// Rewrites the flat column without garbage once it is mostly garbage.
    fn compact(&mut self) {
        if self.flat.len() <= 2 * self.live + 64 {
            return;
        }
        let mut flat = Vec::with_capacity(self.live);
        for r in &mut self.runs {
            let (first, count) = (r.0 as usize, r.1 as usize);
            r.0 = flat.len() as u32;
            flat.extend_from_slice(&self.flat[first..first + count]);
        }
        self.flat = flat;
    }
}

/// A truncatable item: cut with `keep` to fill what the slicer left, kept
/// only when at least `min_tokens` remain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncatable {
    pub keep: crate::text::tokenizer::Keep,
    pub min_tokens: i64,
}

/// The share of its item's score per token a variant of `tokens` and
/// `value` keeps (infinite for none).
fn per_token(tokens: i64, value: f64) -> f64 {
    match tokens {
        0 => f64::INFINITY,
        t => value / t as f64,
    }
}

/// `x` as an `f32` no smaller than it (`x` >= 0 or NaN).
fn up32(x: f64) -> f32 {
    let y = x as f32;
    if (y as f64) < x {
        // (Positive and finite: the next one up is one more in its bits.)
        f32::from_bits(y.to_bits() + 1)
    } else {
        y
    }
}

/// [`Attrs::reach`] of an item of `tokens` without variants: 1 / `tokens`
/// rounded up, infinite for none, 0 for a negative count (never a
/// candidate).
fn own_reach(tokens: i64) -> f32 {
    match tokens {
        ..0 => 0.0,
        0 => f32::INFINITY,
        t => up32(1.0 / t as f64),
    }
}

/// [`Attrs::peak`] of an item of score `score` and reach `reach`: 0 for
/// no score (no steps).
fn peak(score: f64, reach: f32) -> f32 {
    if score > 0.0 {
        up32(score * f64::from(reach) * (1.0 + 1e-9))
    } else {
        0.0
    }
}

/// The fewest and most tokens of the options of an item of `tokens` and
/// `score` that keep the largest share of its score per token, within a
/// relative 1e-9 (its variants keeping at most `spt` per token, those that
/// do having `leading()` fewest and most tokens): the tokens GreedySlice's
/// first hull step of it may take, when all of those fit the target (it
/// takes the fewest or more). `(i64::MAX, i64::MIN)`: no step (no score);
/// `(0, i64::MIN)`: unknown (a zero-token item, or a score too small for
/// the allowance).
pub fn first_leading(
    tokens: i64,
    score: f64,
    spt: f64,
    leading: impl FnOnce() -> (i64, i64),
) -> (i64, i64) {
    if score.is_nan() || score <= 0.0 {
        return (i64::MAX, i64::MIN);
    }
    // The item's own share per token is 1 / tokens; `x` is the variants'
    // best over it (no division).
    let x = spt * tokens as f64;
    // The products and quotients of the options' efficiencies are normal
    // numbers near the best one's: rounded to within 1e-15 of it.
    if tokens == 0 || !(score >= 1e-280 * tokens as f64 || score * spt >= 1e-280) {
        return (0, i64::MIN);
    }
    let (mut fewest, mut most) = (i64::MAX, i64::MIN);
    if x * (1.0 - 1e-9) <= 1.0 {
        (fewest, most) = (tokens, tokens);
    }
    if x >= 1.0 - 1e-9 {
        let (lo, hi) = leading();
        (fewest, most) = (fewest.min(lo), most.max(hi));
    }
    (fewest, most)
}

/// [`first_leading`]'s bounds in a `u16` each: the fewest, at most
/// `u16::MAX`, and the most, `u16::MAX` when it is that or more (more
/// than any target: the bound decides nothing). So when the most is below
/// `u16::MAX` the fewest is exact, or (no step) `u16::MAX`.
fn lead16((fewest, most): (i64, i64)) -> (u16, u16) {
    let max = i64::from(u16::MAX);
    let most = if most >= max {
        u16::MAX
    } else {
        most.max(0) as u16
    };
    (fewest.clamp(0, max) as u16, most)
}

/// `column[i]`, or the default (absent) past its end.
#[inline]
fn cell<T: Clone + Default>(column: &[T], i: u32) -> T {
    column.get(i as usize).cloned().unwrap_or_default()
}

/// `column` grown to `len` entries (absent ones default).
fn grown<T: Clone + Default>(column: &mut Vec<T>, len: usize) -> &mut Vec<T> {
    column.resize(column.len().max(len), T::default());
    column
}

/// What a slicer reads of the items, by item index: tokens, the score the
/// slice uses (pushed, or computed by the Score stage) and kind.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    tokens: &'a [i64],
    scores: &'a [f64],
    kinds: &'a [u32],
    kind_table: &'a KindTable,
    /// KnapsackSlice's integer values, when they are not the scaled scores
    /// (a group's value is the sum of its members': [`crate::group`]).
    values: Option<&'a [i64]>,
    /// The Sort-stage key of each candidate, which breaks GreedySlice's
    /// density ties: its score, or for a unit of a grouped list its best
    /// member's score.
    ties: &'a [f64],
    /// For the options of a list with variants (`crate::choice`): the
    /// candidate each option belongs to. At most one option of a class is
    /// selected; the options of a class are consecutive in every candidate
    /// list.
    classes: Option<&'a [u32]>,
}

impl<'a> View<'a> {
    /// A view of candidates that are not the pushed items (the units of a
    /// grouped list): the columns by candidate index, kinds interned in
    /// `kind_table`, `values` the knapsack values, `ties` the Sort-stage keys.
    pub fn of_columns(
        tokens: &'a [i64],
        scores: &'a [f64],
        kinds: &'a [u32],
        kind_table: &'a KindTable,
        values: &'a [i64],
        ties: &'a [f64],
    ) -> View<'a> {
        assert!(scores.len() == tokens.len() && kinds.len() == tokens.len());
        assert!(values.len() == tokens.len() && ties.len() == tokens.len());
        View {
            tokens,
            scores,
            kinds,
            kind_table,
            values: Some(values),
            ties,
            classes: None,
        }
    }

    /// [`View::of_columns`] whose candidates are options, `classes` giving
    /// the candidate (class) of each.
    pub fn with_classes(self, classes: &'a [u32]) -> View<'a> {
        assert!(classes.len() == self.tokens.len());
        View {
            classes: Some(classes),
            ..self
        }
    }

    /// Whether candidate `i` is the first option of its class (every
    /// candidate of a view without classes is).
    #[inline]
    pub fn is_first_option(&self, i: u32) -> bool {
        let i = i as usize;
        self.classes.is_none_or(|c| i == 0 || c[i] != c[i - 1])
    }

    /// The class of candidate `i`: itself in a view without classes.
    #[inline]
    pub fn class(&self, i: u32) -> u32 {
        self.classes.map_or(i, |c| c[i as usize])
    }

    /// The classes of a view of options; `None` for items or units.
    #[inline]
    pub fn classes(&self) -> Option<&'a [u32]> {
        self.classes
    }

    /// The Sort-stage keys (see the field).
    pub fn ties(&self) -> &'a [f64] {
        self.ties
    }

    /// KnapsackSlice's integer value of candidate `i`: `scaled(score)`
    /// unless the view carries its own values.
    #[inline]
    pub fn value(&self, i: u32, scaled: impl Fn(f64) -> i64) -> i64 {
        match self.values {
            Some(v) => v[i as usize],
            None => scaled(self.score(i)),
        }
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    #[inline]
    pub fn tokens(&self, i: u32) -> i64 {
        self.tokens[i as usize]
    }

    #[inline]
    pub fn score(&self, i: u32) -> f64 {
        self.scores[i as usize]
    }

    /// The interned kind id of item `i`.
    #[inline]
    pub fn kind(&self, i: u32) -> u32 {
        self.kinds[i as usize]
    }

    pub fn tokens_slice(&self) -> &'a [i64] {
        self.tokens
    }

    pub fn scores(&self) -> &'a [f64] {
        self.scores
    }

    pub fn kind_table(&self) -> &'a KindTable {
        self.kind_table
    }

    /// Sum of the tokens of `indices`, saturating at `i64::MAX`.
    pub fn sum_tokens(&self, indices: &[u32]) -> i64 {
        indices
            .iter()
            .fold(0i64, |acc, &i| acc.saturating_add(self.tokens(i)))
    }
}

/// One item to add, already converted from its C representation.
#[derive(Debug, Clone, Copy)]
pub struct NewItem<'a> {
    pub tokens: i64,
    pub score: f64,
    /// `None` is the default kind.
    pub kind: Option<&'a str>,
}

impl Items {
    pub fn new() -> Self {
        Self::default()
    }

    /// Validates one item; `at` names it in messages (e.g. "tokens[3]").
    pub fn check(item: &NewItem<'_>, index: Option<usize>) -> Result<()> {
        // Formatted only into an error message: no allocation per valid item.
        let at = |field| At { field, index };
        if !item.score.is_finite() {
            return invalid!(
                "{} is {}; scores must be finite",
                at(("score", "scores")),
                item.score
            );
        }
        if let Some(k) = item.kind {
            kind::validate(k, &at(("kind", "kinds")))?;
        }
        Ok(())
    }

    fn room_for(&self, count: usize) -> Result<()> {
        if count > MAX_ITEMS - self.len() {
            return invalid!(
                "count {count}: the item set holds {} items and cannot grow past {MAX_ITEMS}",
                self.len()
            );
        }
        Ok(())
    }

    /// Adds one item.
    pub fn push(&mut self, item: NewItem<'_>) -> Result<()> {
        Self::check(&item, None)?;
        self.room_for(1)?;
        self.push_unchecked(item);
        Ok(())
    }

    /// Adds all items or none: every item is validated before any is added.
    pub fn push_many(&mut self, items: &[NewItem<'_>]) -> Result<()> {
        self.push_each(items.len(), |i| Ok(items[i]))
    }

    /// Adds `count` items, item `i` being `item(i)`, all or nothing, in
    /// one pass: each item is checked and added; on the first bad one every
    /// item of the call (and every kind it interned) is taken back.
    pub fn push_each<'a>(
        &mut self,
        count: usize,
        mut item: impl FnMut(usize) -> Result<NewItem<'a>>,
    ) -> Result<()> {
        self.room_for(count)?;
        let reserve = |e| Error::Capacity(format!("cannot allocate room for {count} items: {e}"));
        self.tokens.try_reserve(count).map_err(reserve)?;
        self.scores.try_reserve(count).map_err(reserve)?;
        self.kinds.try_reserve(count).map_err(reserve)?;
        let (len, kinds) = (self.len(), self.kind_table.len());
        for i in 0..count {
            let checked = item(i).and_then(|it| Self::check(&it, Some(i)).map(|()| it));
            match checked {
                Ok(it) => self.push_unchecked(it),
                Err(e) => {
                    self.tokens.truncate(len);
                    self.scores.truncate(len);
                    self.kinds.truncate(len);
                    self.kind_table.truncate(kinds);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn push_unchecked(&mut self, item: NewItem<'_>) {
        let kind = self.kind_table.intern(item.kind.unwrap_or(DEFAULT_KIND));
        self.tokens.push(item.tokens);
        if item.tokens >= 0 {
            self.fewest = Some(self.fewest.map_or(item.tokens, |f| f.min(item.tokens)));
        }
        // -0.0 and 0.0 are one score; store +0.0 so no ordering can tell them apart.
        self.scores.push(item.score + 0.0);
        self.kinds.push(kind);
    }

    /// Removes the items from index `len` on, with every attribute, and the
    /// kinds only they used: the list is as if they had never been pushed.
    pub fn truncate(&mut self, len: usize) -> Result<()> {
        if len > self.len() {
            return invalid!(
                "len {len} is more than the {} items the list holds",
                self.len()
            );
        }
        // Kind ids are given in order of first use, so the first `len`
        // items use ids 0..=max of theirs and no others.
        let kinds = self.kinds[..len]
            .iter()
            .max()
            .map_or(0, |&k| k as usize + 1);
        self.tokens.truncate(len);
        self.scores.truncate(len);
        self.kinds.truncate(len);
        self.kind_table.truncate(kinds);
        let a = &mut self.attrs;
        a.content.truncate(len);
        a.timestamp.truncate(len);
        a.priority.truncate(len);
        a.pinned.truncate(len);
        a.hint.truncate(len);
        a.source.truncate(len);
        a.tags.truncate(len);
        a.metadata.truncate(len);
        a.group.truncate(len);
        a.variants.truncate(len);
        a.runs.truncate(len);
        a.share_per_token.truncate(len);
        a.lightest.truncate(len);
        a.reach.truncate(len);
        a.peak.truncate(len);
        a.lead.truncate(len);
        a.leading.truncate(len);
        a.live = a.runs.iter().map(|r| r.1 as usize).sum();
        a.compact();
        a.truncatable.truncate(len);
        a.key.truncate(len);
        a.volatile.truncate(len);
        Ok(())
    }

    pub fn clear(&mut self) {
        self.tokens.clear();
        self.scores.clear();
        self.kinds.clear();
        self.kind_table.clear();
        self.attrs = Attrs::default();
        self.fewest = None;
    }

    /// The view a slice of the pushed scores reads.
    pub fn view(&self) -> View<'_> {
        self.view_scored(&self.scores)
    }

    /// The view with `scores` (one per item, by index) in place of the
    /// pushed ones: what the Slice stage of the pipeline reads.
    pub fn view_scored<'a>(&'a self, scores: &'a [f64]) -> View<'a> {
        assert_eq!(scores.len(), self.len());
        View {
            tokens: &self.tokens,
            scores,
            kinds: &self.kinds,
            kind_table: &self.kind_table,
            values: None,
            ties: scores,
            classes: None,
        }
    }

    /// Item `index` as a `u32` index for the getters, or an error naming it
    /// when out of range.
    pub fn at(&self, index: usize) -> Result<u32> {
        self.check_index(index).map(|i| i as u32)
    }

    /// The kind of item `i` as first spelled in this list.
    pub fn kind_name(&self, i: u32) -> &str {
        self.kind_table.name(self.kinds[i as usize])
    }

    /// Item `index`, or an error naming it when out of range.
    fn check_index(&self, index: usize) -> Result<usize> {
        if index >= self.len() {
            return invalid!(
                "index {index} is out of range: the list holds {} items",
                self.len()
            );
        }
        Ok(index)
    }

    /// Sets item `index`'s content (byte-exact identity for deduplication).
    pub fn set_content(&mut self, index: usize, content: &str) -> Result<()> {
        let i = self.check_index(index)?;
        if content.is_empty() {
            return invalid!("content of item {index} is empty; content must be non-empty");
        }
        let len = self.len();
        grown(&mut self.attrs.content, len)[i] = Some(content.into());
        Ok(())
    }

    /// Sets item `index`'s timestamp (UTC milliseconds since the epoch).
    pub fn set_timestamp(&mut self, index: usize, unix_millis: i64) -> Result<()> {
        let i = self.check_index(index)?;
        let len = self.len();
        grown(&mut self.attrs.timestamp, len)[i] = Some(unix_millis);
        Ok(())
    }

    pub fn set_priority(&mut self, index: usize, priority: i64) -> Result<()> {
        let i = self.check_index(index)?;
        let len = self.len();
        grown(&mut self.attrs.priority, len)[i] = Some(priority);
        Ok(())
    }

    pub fn set_pinned(&mut self, index: usize, pinned: bool) -> Result<()> {
        let i = self.check_index(index)?;
        let len = self.len();
        grown(&mut self.attrs.pinned, len)[i] = pinned;
        Ok(())
    }

    /// Sets the futureRelevanceHint. Any value is stored (the Reflexive
    /// scorer gives 0 for a non-finite one), NaN included.
    pub fn set_relevance_hint(&mut self, index: usize, hint: f64) -> Result<()> {
        let i = self.check_index(index)?;
        let len = self.len();
        grown(&mut self.attrs.hint, len)[i] = Some(hint);
        Ok(())
    }

    pub fn set_source(&mut self, index: usize, source: &str) -> Result<()> {
        let i = self.check_index(index)?;
        if source.trim().is_empty() {
            return invalid!(
                "source {source:?} is empty or only whitespace; a source needs a visible name"
            );
        }
        let len = self.len();
        grown(&mut self.attrs.source, len)[i] = Some(source.into());
        Ok(())
    }

    /// Adds a tag (tags accumulate; duplicates are kept, as the spec's
    /// TagScorer counts each occurrence).
    pub fn add_tag(&mut self, index: usize, tag: &str) -> Result<()> {
        let i = self.check_index(index)?;
        let len = self.len();
        grown(&mut self.attrs.tags, len)[i].push(tag.into());
        Ok(())
    }

    /// Sets metadata `key` to `value` (replacing an earlier value).
    pub fn set_metadata(&mut self, index: usize, key: &str, value: &str) -> Result<()> {
        let i = self.check_index(index)?;
        let len = self.len();
        let entries = &mut grown(&mut self.attrs.metadata, len)[i];
        match entries.iter_mut().find(|(k, _)| &**k == key) {
            Some(entry) => entry.1 = value.into(),
            None => entries.push((key.into(), value.into())),
        }
        Ok(())
    }

    /// Puts item `index` in keep-together group `group` (0: in none).
    pub fn set_group(&mut self, index: usize, group: u64) -> Result<()> {
        let i = self.check_index(index)?;
        let len = self.len();
        grown(&mut self.attrs.group, len)[i] = group;
        Ok(())
    }

    /// Adds a variant to item `index` (numbered 1, 2, ... in the order
    /// added); returns its number. Nothing changes on error.
    pub fn add_variant(
        &mut self,
        index: usize,
        tokens: i64,
        value: f64,
        content: Option<&str>,
    ) -> Result<usize> {
        let i = self.check_index(index)?;
        if tokens < 0 {
            return invalid!("tokens is {tokens} for a variant of item {index}; it must be >= 0");
        }
        if !(value > 0.0 && value <= 1.0) {
            return invalid!(
                "value is {value} for a variant of item {index}; it must be in (0, 1]"
            );
        }
        if content == Some("") {
            return invalid!("content of a variant of item {index} is empty; pass NULL for none");
        }
        if self.variants(i as u32).len() >= MAX_VARIANTS {
            return invalid!(
                "item {index} has {MAX_VARIANTS} variants already, the most it can have"
            );
        }
        let len = self.len();
        let list = &mut grown(&mut self.attrs.variants, len)[i];
        list.push(Variant {
            tokens,
            value,
            content: content.map(Into::into),
        });
        let added = list.len();
        self.attrs
            .push_flat(i, (tokens, value), (&self.tokens, &self.scores));
        Ok(added)
    }

    /// The variants of item `i` (variant `v` at `[v - 1]`).
    pub fn variants(&self, i: u32) -> &[Variant] {
        self.attrs
            .variants
            .get(i as usize)
            .map_or(&[], |v| v.as_slice())
    }

    /// The variants of item `i` as (tokens, share of the score), variant
    /// `v` at `[v - 1]`: what [`Items::variants`] holds, read from one
    /// column.
    #[inline]
    pub fn variant_shares(&self, i: u32) -> &[(i64, f64)] {
        match self.attrs.runs.get(i as usize) {
            Some(&(first, count)) => &self.attrs.flat[first as usize..(first + count) as usize],
            None => &[],
        }
    }

    /// The largest share of its score per token any variant of item `i`
    /// keeps (infinite for a zero-token variant; 0.0 for none).
    #[inline]
    pub fn variant_share_per_token(&self, i: u32) -> f64 {
        cell(&self.attrs.share_per_token, i)
    }

    /// A bound on the score per token of every option of item `i` (the
    /// item as pushed and its variants), per unit of its score, rounded up
    /// to an `f32`: the larger of 1 / its tokens and its variants' largest
    /// share per token (infinite for a zero-token item or variant; 0 for a
    /// negative-token item, never a candidate).
    #[inline]
    pub fn reach(&self, i: u32) -> f32 {
        match self.attrs.reach.get(i as usize) {
            Some(&r) => r,
            None => own_reach(self.tokens[i as usize]),
        }
    }

    /// With the pushed scores, a bound on the efficiency (score per token)
    /// of every hull step of item `i`'s options, rounded up to an `f32`:
    /// its score times its [`Items::reach`], with an allowance of 1e-9 for
    /// the rounding of the options' scores and steps (0 for no score).
    #[inline]
    pub fn peak(&self, i: u32) -> f32 {
        match self.attrs.peak.get(i as usize) {
            Some(&p) => p,
            None => peak(self.scores[i as usize], self.reach(i)),
        }
    }

    /// [`Items::peak`] of the items from 0 as far as the store keeps it as
    /// a column (the items up to the last one with variants; the others'
    /// are computed).
    pub fn peaks(&self) -> &[f32] {
        &self.attrs.peak
    }

    /// [`Items::lead`] of the items from 0, as far as [`Items::peaks`].
    pub fn leads(&self) -> &[(u16, u16)] {
        &self.attrs.lead
    }

    /// [`first_leading`] of item `i` of `t` tokens and score `s`, from the
    /// store's bounds on its variants.
    #[inline]
    pub fn first_bounds(&self, i: u32, t: i64, s: f64) -> (i64, i64) {
        let spt = self.variant_share_per_token(i);
        first_leading(t, s, spt, || self.variant_leading(i))
    }

    /// With the pushed scores, a bound on the tokens of item `i`'s first
    /// hull step: when the second is `u16::MAX` or more than the target,
    /// none; else its first step takes the first or more
    /// ([`first_leading`] in `u16`s, [`lead16`]).
    #[inline]
    pub fn lead(&self, i: u32) -> (u16, u16) {
        match self.attrs.lead.get(i as usize) {
            Some(&l) => l,
            None => lead16(self.first_bounds(i, self.tokens[i as usize], self.scores[i as usize])),
        }
    }

    /// Whether `view` reads the pushed scores (so [`Items::peak`] bounds
    /// its steps).
    pub fn scores_pushed(&self, view: &View<'_>) -> bool {
        std::ptr::eq(view.scores(), self.scores.as_slice())
    }

    /// At most the fewest tokens of any item (of 0 or more) or variant
    /// (`i64::MAX` for none).
    pub fn fewest_tokens(&self) -> i64 {
        (self.fewest.unwrap_or(i64::MAX)).min(self.fewest_variant_tokens())
    }

    /// At most the fewest tokens any variant has (`i64::MAX` for none).
    pub fn fewest_variant_tokens(&self) -> i64 {
        self.attrs.fewest.unwrap_or(i64::MAX)
    }

    /// The fewest tokens any variant of item `i` has (`i64::MAX` for none).
    #[inline]
    pub fn variant_lightest(&self, i: u32) -> i64 {
        self.attrs
            .lightest
            .get(i as usize)
            .copied()
            .unwrap_or(i64::MAX)
    }

    /// The fewest and most tokens of item `i`'s variants that keep the
    /// largest share of its score per token (within a relative 1e-9);
    /// `(i64::MAX, i64::MIN)` for none.
    #[inline]
    pub fn variant_leading(&self, i: u32) -> (i64, i64) {
        self.attrs
            .leading
            .get(i as usize)
            .copied()
            .unwrap_or((i64::MAX, i64::MIN))
    }

    /// Whether any item has a variant.
    pub fn has_variants(&self) -> bool {
        self.attrs.live != 0
    }

    /// Makes item `index` truncatable (`min_tokens` >= 0), or not (`None`).
    pub fn set_truncatable(
        &mut self,
        index: usize,
        truncatable: Option<Truncatable>,
    ) -> Result<()> {
        let i = self.check_index(index)?;
        if let Some(t) = truncatable {
            if t.min_tokens < 0 {
                return invalid!(
                    "min_tokens is {} for item {index}; it must be >= 0",
                    t.min_tokens
                );
            }
        }
        let len = self.len();
        grown(&mut self.attrs.truncatable, len)[i] = truncatable;
        Ok(())
    }

    /// How item `i` may be cut, if it may.
    pub fn truncatable(&self, i: u32) -> Option<Truncatable> {
        cell(&self.attrs.truncatable, i)
    }

    /// Whether any item is truncatable.
    pub fn has_truncatable(&self) -> bool {
        self.attrs.truncatable.iter().any(Option::is_some)
    }

    /// Gives item `index` a session identity key (0: none,
    /// `crate::session`).
    pub fn set_key(&mut self, index: usize, key: u64) -> Result<()> {
        let i = self.check_index(index)?;
        let len = self.len();
        grown(&mut self.attrs.key, len)[i] = key;
        Ok(())
    }

    /// Marks item `index` volatile (expected to change every turn; a
    /// session places it after every other item) or not.
    pub fn set_volatile(&mut self, index: usize, volatile: bool) -> Result<()> {
        let i = self.check_index(index)?;
        let len = self.len();
        grown(&mut self.attrs.volatile, len)[i] = volatile;
        Ok(())
    }

    /// The session identity key of item `i` (0: none).
    pub fn key(&self, i: u32) -> u64 {
        cell(&self.attrs.key, i)
    }

    /// Whether item `i` was marked volatile.
    pub fn is_volatile(&self, i: u32) -> bool {
        cell(&self.attrs.volatile, i)
    }

    /// The keep-together group of item `i` (0: none).
    pub fn group(&self, i: u32) -> u64 {
        cell(&self.attrs.group, i)
    }

    /// The group column (shorter than the list when never set past its end).
    pub fn groups(&self) -> &[u64] {
        &self.attrs.group
    }

    pub fn content(&self, i: u32) -> Option<&str> {
        self.attrs
            .content
            .get(i as usize)
            .and_then(|c| c.as_deref())
    }

    pub fn timestamp(&self, i: u32) -> Option<i64> {
        cell(&self.attrs.timestamp, i)
    }

    pub fn priority(&self, i: u32) -> Option<i64> {
        cell(&self.attrs.priority, i)
    }

    pub fn pinned(&self, i: u32) -> bool {
        cell(&self.attrs.pinned, i)
    }

    pub fn relevance_hint(&self, i: u32) -> Option<f64> {
        cell(&self.attrs.hint, i)
    }

    /// The source; "Chat" when never set.
    pub fn source(&self, i: u32) -> &str {
        self.attrs
            .source
            .get(i as usize)
            .and_then(|s| s.as_deref())
            .unwrap_or("Chat")
    }

    pub fn tags(&self, i: u32) -> &[Box<str>] {
        self.attrs
            .tags
            .get(i as usize)
            .map_or(&[], |t| t.as_slice())
    }

    pub fn metadata(&self, i: u32) -> &[(Box<str>, Box<str>)] {
        self.attrs
            .metadata
            .get(i as usize)
            .map_or(&[], |m| m.as_slice())
    }

    /// The value of metadata `key` on item `i`.
    pub fn metadata_value(&self, i: u32, key: &str) -> Option<&str> {
        self.metadata(i)
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Test helper: items from (tokens, score, kind) triples.
    #[cfg(test)]
    pub(crate) fn from_spec(spec: &[(i64, f64, &str)]) -> Items {
        let mut items = Items::new();
        for &(tokens, score, kind) in spec {
            let item = NewItem {
                tokens,
                score,
                kind: Some(kind),
            };
            items.push(item).unwrap();
        }
        items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(tokens: i64, score: f64, kind: Option<&str>) -> NewItem<'_> {
        NewItem {
            tokens,
            score,
            kind,
        }
    }

    #[test]
    fn a_count_past_the_item_limit_is_refused_before_anything_is_reserved() {
        let mut items = Items::new();
        items.push(item(5, 0.5, None)).unwrap();
        let err = items
            .push_each(MAX_ITEMS, |_| {
                Err(Error::InvalidArgument("not read".into()))
            })
            .unwrap_err();
        assert!(
            matches!(&err, Error::InvalidArgument(m) if m.contains("cannot grow past")),
            "{err:?}"
        );
        assert_eq!(items.len(), 1);
        // The limit itself, without allocating (a 32 GiB reservation would
        // abort under AddressSanitizer): with one item, room for
        // MAX_ITEMS - 1 more and not one beyond.
        assert!(items.room_for(MAX_ITEMS - 1).is_ok());
        assert!(items.room_for(MAX_ITEMS).is_err());
        assert_eq!(items.len(), 1);
    }

    #[test]
    fn clear_forgets_the_kinds_too() {
        let mut items = Items::new();
        items.push(item(5, 0.5, Some("Tool"))).unwrap();
        items.clear();
        assert!(items.is_empty());
        items.push(item(5, 0.5, Some("TOOL"))).unwrap();
        let view = items.view();
        assert_eq!(view.kind_table().name(view.kind(0)), "TOOL");
        assert_eq!(view.kind_table().len(), 1);
    }

    #[test]
    fn truncate_forgets_the_items_their_attributes_and_their_kinds() {
        let mut items = Items::new();
        items.push(item(1, 0.1, Some("Tool"))).unwrap();
        items.push(item(2, 0.2, Some("Memory"))).unwrap();
        items.push(item(3, 0.3, Some("tool"))).unwrap();
        items.push(item(4, 0.4, Some("Document"))).unwrap();
        for i in 0..4 {
            items.set_content(i, "c").unwrap();
            items.set_timestamp(i, 7).unwrap();
            items.set_priority(i, 7).unwrap();
            items.set_pinned(i, true).unwrap();
            items.set_relevance_hint(i, 0.5).unwrap();
            items.set_source(i, "Tool").unwrap();
            items.add_tag(i, "t").unwrap();
            items.set_metadata(i, "k", "v").unwrap();
            items.set_group(i, 9).unwrap();
        }
        assert!(items.truncate(5).is_err());
        assert_eq!(items.len(), 4);
        items.truncate(4).unwrap();
        assert_eq!(items.len(), 4);
        items.truncate(1).unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(items.view().tokens_slice(), &[1]);
        // Only "Tool" is left; "Memory" and "Document" were the removed items'.
        assert_eq!(items.kind_table.len(), 1);
        // Pushed again, the removed items' places hold nothing of theirs.
        items.push(item(5, 0.5, Some("MEMORY"))).unwrap();
        assert_eq!(items.kind_name(1), "MEMORY");
        assert_eq!(items.content(1), None);
        assert_eq!(items.timestamp(1), None);
        assert_eq!(items.priority(1), None);
        assert!(!items.pinned(1));
        assert_eq!(items.relevance_hint(1), None);
        assert_eq!(items.source(1), "Chat");
        assert!(items.tags(1).is_empty());
        assert!(items.metadata(1).is_empty());
        assert_eq!(items.group(1), 0);
        // The item kept keeps everything.
        assert_eq!(items.content(0), Some("c"));
        assert_eq!(items.group(0), 9);
        assert_eq!(items.tags(0).len(), 1);
        items.truncate(0).unwrap();
        assert!(items.is_empty());
        assert!(items.kind_table.is_empty());
    }

    #[test]
    fn views_report_emptiness() {
        let mut items = Items::new();
        assert!(items.is_empty() && items.view().is_empty());
        items.push(item(5, 0.5, None)).unwrap();
        assert!(!items.is_empty() && !items.view().is_empty());
        assert_eq!(items.view().len(), 1);
    }

    #[test]
    fn push_many_is_all_or_nothing() {
        let mut s = Items::new();
        s.push(item(1, 0.5, None)).unwrap();
        let batch = [
            item(1, 0.1, Some("a")),
            item(2, f64::NAN, Some("b")),
            item(3, 0.3, Some("c")),
        ];
        let err = s.push_many(&batch).unwrap_err();
        assert_eq!(
            err,
            Error::InvalidArgument("scores[1] is NaN; scores must be finite".into())
        );
        assert_eq!(s.len(), 1);
        assert_eq!(
            s.view().kind_table().len(),
            1,
            "no kind of the failed batch is interned"
        );
        // The caches forgot the rolled-back kinds too: "b" and "a" get fresh ids.
        s.push(item(4, 0.4, Some("b"))).unwrap();
        s.push(item(5, 0.5, Some("A"))).unwrap();
        assert_eq!(s.view().kind_table().len(), 3);
        assert_eq!(s.view().kind_table().name(1), "b");
        assert_eq!(s.view().kind_table().name(2), "A");
    }

    #[test]
    fn negative_zero_score_is_stored_as_zero() {
        let mut s = Items::new();
        s.push(item(1, -0.0, None)).unwrap();
        assert!(s.view().score(0).is_sign_positive());
    }

    #[test]
    fn bad_values_are_rejected_with_their_name() {
        let mut s = Items::new();
        let e = s.push(item(5, f64::INFINITY, None)).unwrap_err();
        assert!(e.to_string().contains("score is inf;"), "{e}");
        let e = s.push(item(5, 0.1, Some("  "))).unwrap_err();
        assert!(e.to_string().contains("kind \"  \" is empty"), "{e}");
        assert!(s.is_empty());
        // Negative token counts are stored (Classify excludes them later).
        s.push(item(-5, 0.1, None)).unwrap();
        assert_eq!(s.view().tokens(0), -5);
    }

    /// The flat column and the per-item bounds the variant passes read
    /// (`choice::direct`) hold exactly what `variants` holds, whatever the
    /// order variants are added in (runs moved, then compacted) and after
    /// items are taken back.
    /// `up32` rounds up to an `f32`: exact when it is one, else the next
    /// one above; infinite past the largest; above 0 for a tiny one.
    #[test]
    fn up32_never_rounds_down() {
        assert_eq!(up32(0.25), 0.25);
        let third = up32(1.0 / 3.0);
        assert!(f64::from(third) > 1.0 / 3.0);
        assert!(f64::from(f32::from_bits(third.to_bits() - 1)) < 1.0 / 3.0);
        assert_eq!(up32(f64::INFINITY), f32::INFINITY);
        assert_eq!(up32(1e300), f32::INFINITY);
        assert!(up32(1e-300) > 0.0);
        assert_eq!(up32(0.0), 0.0);
    }

    /// `reach`: 1 / tokens rounded up for an item without variants
    /// (infinite for none, 0 for a negative count), raised by a variant
    /// that keeps more of the score per token, for items the column grew
    /// over and past it; taken back with the item. `fewest_tokens`: the
    /// fewest of the items' (of 0 or more) and the variants'.
    #[test]
    fn reach_bounds_every_option_per_unit_of_score() {
        let mut s = Items::new();
        for t in [4, 3, 0, -5, 100, 7] {
            s.push(item(t, 0.5, None)).unwrap();
        }
        let own: Vec<f32> = (0..6).map(|i| s.reach(i)).collect();
        let third = up32(1.0 / 3.0);
        let (seventh, hundredth) = (up32(1.0 / 7.0), up32(0.01));
        assert!(f64::from(hundredth) > 0.01, "0.01 is no f32: rounded up");
        assert_eq!(own, [0.25, third, f32::INFINITY, 0.0, hundredth, seventh]);
        // 0.5 / 2 is more than 1 / 100 (item 4); 0.1 / 2 less than 1 / 4.
        s.add_variant(4, 2, 0.5, None).unwrap();
        s.add_variant(0, 2, 0.1, None).unwrap();
        let grown: Vec<f32> = (0..6).map(|i| s.reach(i)).collect();
        assert_eq!(grown, [0.25, third, f32::INFINITY, 0.0, 0.25, seventh]);
        assert_eq!(s.attrs.reach.len(), 5, "grown to item 4");
        // A zero-token variant: infinite.
        s.add_variant(5, 0, 0.5, None).unwrap();
        assert_eq!(s.reach(5), f32::INFINITY);
        // Taking item 4 on back takes its bound.
        s.truncate(4).unwrap();
        s.push(item(100, 0.5, None)).unwrap();
        assert_eq!(s.reach(4), hundredth);
        assert_eq!(s.fewest_tokens(), 0);
        let mut f = Items::new();
        assert_eq!(f.fewest_tokens(), i64::MAX);
        for t in [7, -3, 5, 9] {
            f.push(item(t, 0.5, None)).unwrap();
        }
        assert_eq!(f.fewest_tokens(), 5);
        f.add_variant(3, 2, 0.5, None).unwrap();
        assert_eq!(f.fewest_tokens(), 2);
        f.clear();
        f.push(item(8, 0.5, None)).unwrap();
        assert_eq!(f.fewest_tokens(), 8);
    }

    /// `peak`: the pushed score times the reach, with the allowance,
    /// rounded up to an `f32` (0 for no score), kept as variants are
    /// added, read past the column, taken back with the item.
    #[test]
    fn peak_bounds_the_steps_with_the_pushed_scores() {
        let mut s = Items::new();
        // (Item 1 has no tokens and no score: 0, not 0 times infinity.)
        for (t, score) in [(4, 0.5), (0, 0.0), (0, 0.25), (100, 0.5), (8, -1.0)] {
            s.push(item(t, score, None)).unwrap();
        }
        let want = |score: f64, reach: f32| up32(score * f64::from(reach) * (1.0 + 1e-9));
        let peaks = |s: &Items| (0..5).map(|i| s.peak(i)).collect::<Vec<f32>>();
        let own = [
            want(0.5, 0.25),
            0.0,
            f32::INFINITY,
            want(0.5, up32(0.01)),
            0.0,
        ];
        assert_eq!(peaks(&s), own);
        // Item 3's variant keeps 0.5 of its score in 2 tokens: 0.5 * 0.25.
        s.add_variant(3, 2, 0.5, None).unwrap();
        let grown = [own[0], 0.0, f32::INFINITY, want(0.5, 0.25), 0.0];
        assert_eq!(peaks(&s), grown);
        assert_eq!(s.attrs.peak.len(), 4, "grown to item 3");
        assert_eq!(s.peaks(), &grown[..4], "the column");
        s.truncate(3).unwrap();
        s.push(item(100, 0.5, None)).unwrap();
        assert_eq!(s.peak(3), own[3]);
        let scores = vec![1.0; 4];
        assert!(s.scores_pushed(&s.view()));
        assert!(!s.scores_pushed(&s.view_scored(&scores)));
    }

    /// `lead16` keeps the fewest up to `u16::MAX` and the most below it
    /// (`u16::MAX` for the most at or past it: more than any target), and
    /// `lead` is it of `first_leading` with the pushed scores: none for no
    /// score, unknown for a zero-token item or a tiny score, the item's own
    /// tokens, the leading variants' (with the item's own when it keeps as
    /// much per token), kept as variants are added and past the column.
    #[test]
    fn lead_bounds_the_first_step_in_u16s() {
        let max = i64::from(u16::MAX);
        assert_eq!(lead16((5, 7)), (5, 7));
        assert_eq!(lead16((i64::MAX, i64::MIN)), (u16::MAX, 0));
        assert_eq!(lead16((0, i64::MIN)), (0, 0));
        assert_eq!(lead16((max - 1, max - 1)), (u16::MAX - 1, u16::MAX - 1));
        assert_eq!(lead16((max, max)), (u16::MAX, u16::MAX));
        assert_eq!(lead16((5, max)), (5, u16::MAX));
        assert_eq!(lead16((1 << 40, 1 << 41)), (u16::MAX, u16::MAX));
        let mut s = Items::new();
        let items = [
            (100, 0.5),
            (40, 0.0),
            (0, 0.5),
            (60, 1e-300),
            (1 << 40, 0.5),
            (30, 0.5),
        ];
        for (t, score) in items {
            s.push(item(t, score, None)).unwrap();
        }
        let leads = |s: &Items| (0..6).map(|i| s.lead(i)).collect::<Vec<(u16, u16)>>();
        let own = [
            (100, 100),
            (u16::MAX, 0),
            (0, 0),
            (0, 0),
            (u16::MAX, u16::MAX),
            (30, 30),
        ];
        assert_eq!(leads(&s), own);
        // Item 0: 10 tokens keeping 0.5 (0.05 a token, over its own 0.01)
        // and 20 keeping 1.0 lead; item 5: 15 tokens keeping half keep as
        // much per token as the item itself.
        s.add_variant(0, 10, 0.5, None).unwrap();
        s.add_variant(0, 20, 1.0, None).unwrap();
        s.add_variant(0, 5, 0.1, None).unwrap();
        s.add_variant(5, 15, 0.5, None).unwrap();
        let grown = [(10, 20), own[1], own[2], own[3], own[4], (15, 30)];
        assert_eq!(leads(&s), grown);
        assert_eq!(s.leads(), grown, "the column");
        s.truncate(5).unwrap();
        s.push(item(30, 0.5, None)).unwrap();
        assert_eq!(s.lead(5), (30, 30), "taken back");
        assert_eq!(s.first_bounds(0, 100, 0.5), (10, 20));
        assert_eq!(s.first_bounds(0, 100, -1.0), (i64::MAX, i64::MIN));
    }

    #[test]
    fn variant_columns_and_bounds_are_exact() {
        let mut s = Items::new();
        for _ in 0..4 {
            s.push(item(100, 0.5, None)).unwrap();
        }
        assert_eq!(s.variant_shares(3), &[] as &[(i64, f64)]);
        assert_eq!(
            (s.variant_share_per_token(3), s.variant_lightest(3)),
            (0.0, i64::MAX)
        );
        assert_eq!(s.fewest_variant_tokens(), i64::MAX);
        // A run is copied to the end only when another item's follows it.
        let mut c = Items::new();
        c.push(item(100, 0.5, None)).unwrap();
        c.push(item(100, 0.5, None)).unwrap();
        let mut lens = Vec::new();
        for i in [0, 0, 0, 1, 1, 0] {
            c.add_variant(i, 5, 0.5, None).unwrap();
            lens.push(c.attrs.flat.len());
        }
        assert_eq!(lens, [1, 2, 3, 4, 5, 9]);
        // Interleaved: item 1's run is moved past item 0's, and so on.
        let adds = [
            (1, 8, 0.5),
            (0, 2, 1.0),
            (1, 4, 0.75),
            (2, 1, 1.0),
            (0, 5, 0.25),
            (1, 3, 0.5),
        ];
        for (i, t, v) in adds {
            s.add_variant(i, t, v, None).unwrap();
        }
        // Enough moves of one item's run that most of the column is garbage.
        for k in 0..40 {
            s.add_variant(3, 50 + k, 0.5, None).unwrap();
            s.add_variant(2, 60 + k, 0.5, None).unwrap();
        }
        for i in 0..4u32 {
            let want: Vec<(i64, f64)> = s.variants(i).iter().map(|v| (v.tokens, v.value)).collect();
            assert_eq!(s.variant_shares(i), want.as_slice(), "item {i}");
        }
        // Largest share per token, exactly: 1.0 / 2 for item 0 (not 0.25 / 5),
        // 0.75 / 4 for item 1, 1.0 / 1 for item 2, 0.5 / 50 for item 3.
        assert_eq!(s.variant_share_per_token(0), 0.5);
        assert_eq!(s.variant_share_per_token(1), 0.1875);
        assert_eq!(s.variant_share_per_token(2), 1.0);
        assert_eq!(s.variant_share_per_token(3), 0.01);
        let lightest: Vec<i64> = (0..4).map(|i| s.variant_lightest(i)).collect();
        assert_eq!(lightest, [2, 3, 1, 50]);
        assert_eq!(s.fewest_variant_tokens(), 1);
        // The fewest and most tokens of the variants at that share per
        // token: item 3's 0.5 / 50 only (not 0.5 / 51 nor 0.5 / 60).
        let leading: Vec<(i64, i64)> = (0..4).map(|i| s.variant_leading(i)).collect();
        assert_eq!(leading, [(2, 2), (4, 4), (1, 1), (50, 50)]);
        // Ties within the allowance lead together; a better one replaces
        // them; a zero-token variant leads alone.
        let mut l = Items::new();
        l.push(item(100, 0.5, None)).unwrap();
        assert_eq!(l.variant_leading(0), (i64::MAX, i64::MIN), "none");
        let steps = [
            (10, 0.5, (10, 10)),
            (6, 0.3, (6, 10)),
            (14, 0.7 * (1.0 - 5e-10), (6, 14)),
            (4, 0.2 * (1.0 - 2e-9), (6, 14)),
            (16, 0.8 * (1.0 - 2e-9), (6, 14)),
            (5, 0.5, (5, 5)),
            (0, 0.1, (0, 0)),
            (1, 1.0, (0, 0)),
        ];
        for (t, v, want) in steps {
            l.add_variant(0, t, v, None).unwrap();
            assert_eq!(l.variant_leading(0), want, "after ({t}, {v})");
        }
        l.truncate(0).unwrap();
        l.push(item(100, 0.5, None)).unwrap();
        assert_eq!(l.variant_leading(0), (i64::MAX, i64::MIN), "taken back");
        s.add_variant(3, 0, 0.5, None).unwrap();
        assert_eq!(s.variant_share_per_token(3), f64::INFINITY);
        assert_eq!(s.fewest_variant_tokens(), 0);
        // Taking items 2 and 3 back takes their runs and bounds.
        s.truncate(2).unwrap();
        s.push(item(100, 0.5, None)).unwrap();
        assert_eq!(s.variant_shares(2), &[] as &[(i64, f64)]);
        assert_eq!(
            (s.variant_share_per_token(2), s.variant_lightest(2)),
            (0.0, i64::MAX)
        );
        assert_eq!(s.variant_shares(1), &[(8, 0.5), (4, 0.75), (3, 0.5)]);
        s.add_variant(2, 7, 0.5, None).unwrap();
        assert_eq!(s.variant_shares(2), &[(7, 0.5)]);
        assert_eq!(s.variant_shares(0), &[(2, 1.0), (5, 0.25)]);
    }

    #[test]
    fn variants_and_truncation_are_stored_checked_and_taken_back() {
        use crate::text::tokenizer::Keep;
        let mut s = Items::new();
        s.push(item(100, 0.5, None)).unwrap();
        s.push(item(50, 0.5, None)).unwrap();
        assert!(!s.has_variants() && !s.has_truncatable());
        assert_eq!(s.add_variant(1, 10, 0.5, Some("short")).unwrap(), 1);
        assert_eq!(s.add_variant(1, 0, 1.0, None).unwrap(), 2);
        assert!(s.has_variants() && !s.has_truncatable());
        assert!(s.variants(0).is_empty());
        assert_eq!(s.variants(1)[0].content.as_deref(), Some("short"));
        assert_eq!((s.variants(1)[1].tokens, s.variants(1)[1].value), (0, 1.0));
        for (tokens, value) in [
            (-1, 0.5),
            (1, 0.0),
            (1, 1.0000001),
            (1, f64::NAN),
            (1, -0.5),
        ] {
            assert!(
                s.add_variant(0, tokens, value, None).is_err(),
                "{tokens} {value}"
            );
        }
        assert!(s.add_variant(0, 1, 0.5, Some("")).is_err());
        assert!(s.add_variant(2, 1, 0.5, None).is_err());
        assert!(s.variants(0).is_empty(), "nothing changed");
        let t = Truncatable {
            keep: Keep::Tail,
            min_tokens: 3,
        };
        assert!(s
            .set_truncatable(
                0,
                Some(Truncatable {
                    min_tokens: -1,
                    ..t
                })
            )
            .is_err());
        assert!(!s.has_truncatable());
        s.set_truncatable(0, Some(t)).unwrap();
        assert!(s.has_truncatable());
        assert_eq!(s.truncatable(0), Some(t));
        assert_eq!(s.truncatable(1), None);
        s.set_truncatable(0, None).unwrap();
        assert!(!s.has_truncatable());
        // Taking items back takes their variants and truncation too.
        s.set_truncatable(1, Some(t)).unwrap();
        s.truncate(1).unwrap();
        assert!(!s.has_variants() && !s.has_truncatable());
    }
}
