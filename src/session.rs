//! Sessions (`../shared/abi-session.md`, docs/sessions.md): cache-stable
//! selection across the turns of a conversation or agent loop.
//!
//! A session runs its pipeline each turn (F, the fresh selection) and then
//! changes the prompt only at its end whenever it can:
//!
//! - **First**: F, volatile items last.
//! - **Append**: the previous output's non-volatile items (P) in their
//!   order, then the new or pinned items F selects (N), then F's volatile
//!   items (V), when all of P is still there with the same option, no group
//!   straddles P, and they fit. Nothing else is added: the room that is
//!   left is kept for the turns to come (docs/sessions.md says why).
//! - **Compaction**: otherwise a fresh selection of the non-pinned,
//!   non-volatile items within `floor((1 - slack) x T)` tokens that keeps
//!   a prefix of P (a forced prefix) where the tokens it keeps cached are
//!   worth more than the score it costs ([`PREFIX_WEIGHT`]); volatile items
//!   as F selects them, last.
//!
//! Identity: an item's key with its tokens and content, or, without a key,
//! its kind, tokens and content ([`Ident`]); equal keyless items match the
//! previous output in push order.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use crate::budget::Budget;
use crate::choice::fill::share;
use crate::error::{invalid, Result};
use crate::group::Groups;
use crate::items::Items;
use crate::pipeline::report::{Decision, Reason, Report};
use crate::pipeline::slice::{Outcome, Shrunk};
use crate::pipeline::{Pipeline, Restrict, Run};

/// The default slack: the share of the effective target a compaction
/// leaves free for the turns after it (docs/sessions.md, BENCHMARKS.md
/// "Sessions" give the figures it was chosen from).
pub const DEFAULT_SLACK: f64 = 0.2;

/// What a compaction weighs a kept prefix by: a prefix of the previous
/// output that stays cached is worth this share of the selection's score
/// per effective target of tokens (docs/sessions.md).
pub const PREFIX_WEIGHT: f64 = 0.03;

/// A compaction never keeps a prefix whose selection scores under this
/// share of the plain selection's.
pub const MIN_PREFIX_SCORE: f64 = 0.9;

/// How many prefix ends of the previous output a compaction tries (evenly
/// spread; each is one restricted pipeline run).
pub const PREFIX_SAMPLES: usize = 16;

/// Which rule a session run took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Action {
    First = 0,
    Append = 1,
    Compact = 2,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::First => "first",
            Action::Append => "append",
            Action::Compact => "compact",
        }
    }
}

/// What a breakpoint marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// The end of the leading pinned items.
    Pinned,
    /// The end of the prefix the last compaction kept.
    Compaction,
    /// The end of this run's stable prefix (what the cache already holds).
    Stable,
    /// The end of the non-volatile items (what the next turn will reuse).
    End,
}

impl Mark {
    pub fn name(self) -> &'static str {
        match self {
            Mark::Pinned => "pinned",
            Mark::Compaction => "compaction",
            Mark::Stable => "stable",
            Mark::End => "end",
        }
    }
}

/// A cache breakpoint: after the first `items` items of the output, which
/// add `tokens` tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Breakpoint {
    pub items: usize,
    pub tokens: i64,
    pub mark: Mark,
}

/// What a session run adds to its report.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Info {
    pub action: Option<Action>,
    pub stable_items: usize,
    pub stable_tokens: i64,
    pub breakpoints: Vec<Breakpoint>,
}

/// An item's identity from one run to the next: a 128-bit fingerprint (two
/// salted SipHash digests) of key, tokens and content, or of kind, tokens
/// and content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Ident(u64, u64);

impl Ident {
    fn of<T: Hash>(salt: u8, value: &T) -> Ident {
        Ident(
            print_of(salt, &(b'a', value)),
            print_of(salt, &(b'b', value)),
        )
    }
}

/// The option an output item was included with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Opt {
    /// 0: as pushed (maybe cut); v: variant v.
    variant: u8,
    /// The variant's tokens and content (0 for option 0).
    print: u64,
    cut: Option<(usize, usize)>,
    /// The tokens it adds.
    tokens: i64,
}

/// One item of an output, as remembered for the next run.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry {
    id: Option<Ident>,
    opt: Opt,
    volatile: bool,
    pinned: bool,
}

/// What a session remembers of its last successful run.
#[derive(Debug, Clone, Default)]
struct State {
    /// The identities of the last run's list, with their counts.
    list: HashMap<Ident, u32>,
    out: Vec<Entry>,
    /// Output position where the last compaction's kept prefix ended.
    compaction_point: usize,
}

/// A cache-stable selection across turns.
#[derive(Debug, Clone)]
pub struct Session {
    pipeline: Pipeline,
    slack: f64,
    state: Option<State>,
    info: Info,
}

fn print_of<T: Hash>(salt: u8, value: &T) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    salt.hash(&mut h);
    value.hash(&mut h);
    h.finish()
}

/// What one run computes of the current list.
struct Current<'a> {
    items: &'a Items,
    ids: Vec<Option<Ident>>,
    volatile: Vec<bool>,
    groups: Option<Groups>,
    /// Pinned as Classify has it (a group with a pinned member is pinned
    /// whole); set from the fresh run.
    pinned: Vec<bool>,
}

impl<'a> Current<'a> {
    fn of(items: &'a Items) -> Result<Current<'a>> {
        let n = items.len();
        let mut keys: HashMap<u64, usize> = HashMap::new();
        let mut ids = Vec::with_capacity(n);
        let mut volatile = Vec::with_capacity(n);
        let view = items.view();
        for i in 0..n as u32 {
            let key = items.key(i);
            if key != 0 {
                if let Some(&first) = keys.get(&key) {
                    return invalid!(
                        "items {first} and {i} have the same key {key}; \
                         a key names one item of a list"
                    );
                }
                keys.insert(key, i as usize);
            }
            let content = items.content(i);
            let t = view.tokens(i);
            let id = match (key, content) {
                (0, None) => None,
                (0, Some(c)) => Some(Ident::of(1, &(items.kind_name(i), t, c))),
                (k, c) => Some(Ident::of(2, &(k, t, c))),
            };
            volatile.push(items.is_volatile(i) || id.is_none());
            ids.push(id);
        }
        let groups = Groups::of(items);
        // A group is volatile when any member is.
        if let Some(g) = &groups {
            for i in 0..n as u32 {
                if volatile[i as usize] {
                    continue;
                }
                if let Some(gi) = g.group(i) {
                    if g.members(gi).iter().any(|&m| volatile[m as usize]) {
                        volatile[i as usize] = true;
                    }
                }
            }
        }
        Ok(Current {
            items,
            ids,
            volatile,
            groups,
            pinned: vec![false; n],
        })
    }

    /// The option item `i` has in `outcome`.
    fn opt(&self, i: u32, outcome: &Outcome) -> Opt {
        let items = self.items;
        match outcome.shrunk.get(&i) {
            None => Opt {
                variant: 0,
                print: 0,
                cut: None,
                tokens: items.view().tokens(i),
            },
            Some(s) => Opt {
                variant: s.variant,
                print: match s.variant {
                    0 => 0,
                    v => {
                        let var = &items.variants(i)[v as usize - 1];
                        print_of(5, &(var.tokens, var.content.as_deref()))
                    }
                },
                cut: s.cut,
                tokens: s.tokens,
            },
        }
    }

    /// Whether item `i` can be included with `opt` (the option it had).
    fn allows(&self, i: u32, opt: &Opt) -> bool {
        let items = self.items;
        if opt.variant > 0 {
            let Some(var) = items.variants(i).get(opt.variant as usize - 1) else {
                return false;
            };
            if print_of(5, &(var.tokens, var.content.as_deref())) != opt.print
                || self.pinned[i as usize]
            {
                return false;
            }
        }
        // The same identity is the same content: the cut still fits it.
        !(opt.cut.is_some() && (items.truncatable(i).is_none() || self.pinned[i as usize]))
    }

    fn entry(&self, i: u32, opt: Opt) -> Entry {
        Entry {
            id: self.ids[i as usize],
            opt,
            volatile: self.volatile[i as usize],
            pinned: self.pinned[i as usize],
        }
    }

    /// The tokens the unpinned entries of `list` add.
    fn unpinned_tokens(&self, list: &[(u32, Opt)]) -> i64 {
        list.iter()
            .filter(|&&(i, _)| !self.pinned[i as usize])
            .fold(0i64, |a, (_, o)| a.saturating_add(o.tokens))
    }

    /// Score `i` adds with `opt` (the scorer's score times the share kept).
    fn score(&self, scores: &[f64], i: u32, opt: &Opt) -> f64 {
        let shrunk = Shrunk {
            variant: opt.variant,
            tokens: opt.tokens,
            cut: opt.cut,
        };
        let plain = opt.variant == 0 && opt.cut.is_none();
        let view = self.items.view();
        scores[i as usize] * share(self.items, view, i, (!plain).then_some(&shrunk))
    }
}

impl Session {
    /// A session over `pipeline`, with its policy's `sessionSlack` or the
    /// default slack.
    pub fn new(pipeline: Pipeline) -> Session {
        Session {
            slack: pipeline.policy.session_slack.unwrap_or(DEFAULT_SLACK),
            pipeline,
            state: None,
            info: Info::default(),
        }
    }

    pub fn slack(&self) -> f64 {
        self.slack
    }

    /// Sets the slack, in [0, 1).
    pub fn set_slack(&mut self, fraction: f64) -> Result<()> {
        if !(0.0..1.0).contains(&fraction) {
            return invalid!("fraction is {fraction}; the slack must be in [0, 1)");
        }
        self.slack = fraction;
        Ok(())
    }

    /// Forgets every run: the next run is a first run.
    pub fn reset(&mut self) {
        self.state = None;
        self.info = Info::default();
    }

    /// The last successful run's rule (`First` before any).
    pub fn last_action(&self) -> Action {
        self.info.action.unwrap_or(Action::First)
    }

    /// The last run's stable prefix: items and tokens.
    pub fn stable_prefix(&self) -> (usize, i64) {
        (self.info.stable_items, self.info.stable_tokens)
    }

    /// The last run's cache breakpoints, ascending.
    pub fn breakpoints(&self) -> &[Breakpoint] {
        &self.info.breakpoints
    }

    /// One turn: the output's item indices in prompt order. On error
    /// nothing changes.
    pub fn run(
        &mut self,
        items: &Items,
        budget: &Budget,
        report: Option<&mut Report>,
    ) -> Result<Vec<u32>> {
        let mut cur = Current::of(items)?;
        let mut fresh_report = report.as_ref().map(|_| Report::default());
        let fresh = self
            .pipeline
            .run_full(items, budget, fresh_report.as_mut())?;
        for &i in &fresh.prepared.classes.pinned {
            cur.pinned[i as usize] = true;
        }
        let (action, out, point) = match &self.state {
            None => (Action::First, first(&cur, &fresh), 0),
            Some(state) => match self.append(&cur, &fresh, state) {
                Some(out) => (Action::Append, out, state.compaction_point),
                None => {
                    let (out, k) = self.compact(&cur, items, budget, &fresh, state);
                    (Action::Compact, out, k)
                }
            },
        };
        // Everything that can fail has run: remember this run.
        let entries: Vec<Entry> = out.iter().map(|&(i, o)| cur.entry(i, o)).collect();
        // A first run has no state: its stable prefix is 0.
        let stable = self
            .state
            .as_ref()
            .map_or(0, |state| common_prefix(&state.out, &entries));
        let tokens_to = |k: usize| -> i64 {
            entries[..k]
                .iter()
                .fold(0i64, |a, e| a.saturating_add(e.opt.tokens))
        };
        let pinned_end = entries.iter().take_while(|e| e.pinned).count();
        let end = entries.iter().take_while(|e| !e.volatile).count();
        let mut marks = vec![
            (pinned_end, Mark::Pinned),
            (point.min(end), Mark::Compaction),
            (stable, Mark::Stable),
            (end, Mark::End),
        ];
        marks.sort_by_key(|&(k, _)| k);
        let mut breakpoints: Vec<Breakpoint> = Vec::new();
        for (k, mark) in marks {
            if k == 0 {
                continue;
            }
            match breakpoints.last_mut() {
                // One breakpoint a position: the later mark names it.
                Some(b) if b.items == k => b.mark = mark,
                _ => breakpoints.push(Breakpoint {
                    items: k,
                    tokens: tokens_to(k),
                    mark,
                }),
            }
        }
        self.info = Info {
            action: Some(action),
            stable_items: stable,
            stable_tokens: tokens_to(stable),
            breakpoints,
        };
        let mut list: HashMap<Ident, u32> = HashMap::new();
        for id in cur.ids.iter().flatten() {
            *list.entry(*id).or_insert(0) += 1;
        }
        self.state = Some(State {
            list,
            out: entries,
            compaction_point: point,
        });
        if let (Some(report), Some(fresh_report)) = (report, fresh_report) {
            *report = session_report(&cur, &fresh, fresh_report, &out, self.info.clone());
            report.quotas =
                crate::analytics::quota_rows(&self.pipeline.engine.slicer, items, report);
        }
        Ok(out.iter().map(|&(i, _)| i).collect())
    }

    /// The Append rule, or `None` when it does not apply.
    fn append(&self, cur: &Current<'_>, fresh: &Run, state: &State) -> Option<Vec<(u32, Opt)>> {
        let items = cur.items;
        let p = match_previous(cur, state);
        let mut taken = vec![false; items.len()];
        let mut out: Vec<(u32, Opt)> = Vec::with_capacity(fresh.placed.len() + p.len());
        for (i, opt) in p {
            let i = i?;
            taken[i as usize] = true;
            out.push((i, opt));
        }
        // Every group of P whole and together in it.
        if !groups_whole_and_together(cur, &out, &taken) {
            return None;
        }
        let in_p = out.len();
        let dup = dup_of(cur, &self.pipeline, &out);
        let mut seen: HashMap<Ident, u32> = HashMap::new();
        let mut new = vec![false; items.len()];
        for (i, id) in cur.ids.iter().enumerate() {
            if let Some(id) = id {
                let n = seen.entry(*id).or_insert(0);
                *n += 1;
                new[i] = *n > state.list.get(id).copied().unwrap_or(0);
            }
        }
        let mut volatile = Vec::new();
        for &i in &fresh.placed {
            let u = i as usize;
            if taken[u] || dup(i) {
                continue;
            }
            let opt = cur.opt(i, &fresh.outcome);
            if cur.volatile[u] {
                volatile.push((i, opt));
            } else if cur.pinned[u] || new[u] {
                out.push((i, opt));
            } else {
                continue;
            }
            taken[u] = true;
        }
        // Every group of N and V whole (F places each group together).
        let added = out[in_p..].iter().chain(&volatile);
        if let Some(g) = &cur.groups {
            for &(i, _) in added {
                if g.unit(&i).iter().any(|&m| !taken[m as usize]) {
                    return None;
                }
            }
        }
        let used = cur
            .unpinned_tokens(&out)
            .saturating_add(cur.unpinned_tokens(&volatile));
        if used > fresh.outcome.effective_target {
            return None;
        }
        out.extend(volatile);
        Some(out)
    }

    /// The Compaction rule: the output and the length of the prefix of P it
    /// kept.
    fn compact(
        &self,
        cur: &Current<'_>,
        items: &Items,
        budget: &Budget,
        fresh: &Run,
        state: &State,
    ) -> (Vec<(u32, Opt)>, usize) {
        let n = items.len();
        let target = fresh.outcome.effective_target;
        // Volatile items as F selects them.
        let volatile: Vec<(u32, Opt)> = fresh
            .placed
            .iter()
            .filter(|&&i| cur.volatile[i as usize])
            .map(|&i| (i, cur.opt(i, &fresh.outcome)))
            .collect();
        let room = ((1.0 - self.slack) * target as f64).floor() as i64;
        let cap = room
            .min(target.saturating_sub(cur.unpinned_tokens(&volatile)))
            .max(0);
        // The prefixes of P that can be kept: every item there with its
        // option, each group whole and together; `ends` has those within
        // the cap, `all_ends` every one.
        let p = match_previous(cur, state);
        let mut ends: Vec<(usize, i64)> = vec![(0, 0)];
        let mut forced_tokens = 0i64;
        // The group being walked through and its members in push order (the
        // order the pipeline places them in), and how many are behind.
        let (mut open, mut seen): (&[u32], usize) = (&[], 0);
        for (k, &(i, opt)) in p.iter().enumerate() {
            let Some(i) = i else { break };
            if !cur.pinned[i as usize] {
                forced_tokens = forced_tokens.saturating_add(opt.tokens);
            }
            if seen == open.len() {
                open = match &cur.groups {
                    Some(g) => g.group(i).map_or(&[][..], |gi| g.members(gi)),
                    None => &[],
                };
                seen = 0;
            }
            // Inside a group: only its next member may follow.
            if !open.is_empty() {
                if open[seen] != i {
                    break;
                }
                seen += 1;
            }
            let open_left = open.len() - seen;
            if open_left == 0 {
                ends.push((k + 1, forced_tokens));
            }
        }
        // The selection that forces the first k items of P: those items,
        // then the rest the pipeline selects from every other candidate
        // within the cap less their tokens, in the placer's order; and its
        // score. None when the slicer cannot select so (a count it cannot
        // meet without the forced items).
        let select = |k: usize, used: i64| -> Option<(Vec<(u32, Opt)>, f64)> {
            let mut skip = cur.volatile.clone();
            let forced: Vec<(u32, Opt)> = p[..k].iter().map(|&(i, o)| (i.unwrap(), o)).collect();
            let mut is_forced = vec![false; n];
            for &(i, _) in &forced {
                skip[i as usize] = true;
                is_forced[i as usize] = true;
            }
            let dup = dup_of(cur, &self.pipeline, &forced);
            for (i, s) in skip.iter_mut().enumerate() {
                *s |= dup(i as u32);
            }
            let restrict = Restrict {
                skip: &skip,
                cap: cap - used,
            };
            let (placed, outcome) = self
                .pipeline
                .run_restricted(items, budget, fresh, &restrict)
                .ok()?;
            // The restricted run places every pinned item too.
            let mut out = forced;
            for &i in &placed {
                if !cur.volatile[i as usize] && !is_forced[i as usize] {
                    out.push((i, cur.opt(i, &outcome)));
                }
            }
            let score = out
                .iter()
                .filter(|&&(i, _)| !cur.pinned[i as usize])
                .map(|(i, o)| cur.score(&fresh.prepared.scores, *i, o))
                .sum();
            Some((out, score))
        };
        // The prefix whose selection is worth most: its score (over the
        // plain selection's) plus PREFIX_WEIGHT per effective target of
        // tokens it keeps cached, at up to PREFIX_SAMPLES prefix ends spread
        // evenly over P; never one that loses more than 1 - MIN_PREFIX_SCORE
        // of the score.
        let all_ends = ends;
        let within = all_ends.iter().take_while(|e| e.1 <= cap).count();
        let ends = &all_ends[..within];
        let (mut best, base) = match select(0, 0) {
            Some(plain) => plain,
            // The slicer cannot select within the slack (a count it cannot
            // meet there): the pipeline's own selection.
            None => {
                let stay = first(cur, fresh)
                    .into_iter()
                    .filter(|e| !cur.volatile[e.0 as usize]);
                (stay.collect(), 0.0)
            }
        };
        let mut best_value = base;
        let last = ends.len() - 1;
        let samples = PREFIX_SAMPLES.min(last);
        for q in 1..=samples {
            let (k, tokens) = ends[1 + (last - 1) * (q - 1) / (samples - 1).max(1)];
            let Some((out, score)) = select(k, tokens) else {
                continue;
            };
            // score / base + PREFIX_WEIGHT x tokens / T, times base (which
            // keeps a list whose scores are all 0 from dividing by 0).
            let value = score + base * PREFIX_WEIGHT * tokens as f64 / target.max(1) as f64;
            if value > best_value && score >= MIN_PREFIX_SCORE * base {
                (best, best_value) = (out, value);
            }
        }
        // The output leads with the longest prefix of P the selection holds
        // (same items, same options, groups whole), in P's order.
        let mut chosen: HashMap<u32, Opt> = best.iter().copied().collect();
        let kept = all_ends
            .iter()
            .map(|e| e.0)
            .take_while(|&k| {
                p[..k]
                    .iter()
                    .all(|&(i, o)| i.and_then(|i| chosen.get(&i)) == Some(&o))
            })
            .last()
            .unwrap_or(0);
        let mut out: Vec<(u32, Opt)> = p[..kept].iter().map(|&(i, o)| (i.unwrap(), o)).collect();
        for &(i, _) in &out {
            chosen.remove(&i);
        }
        out.extend(best.into_iter().filter(|e| chosen.contains_key(&e.0)));
        let dup = dup_of(cur, &self.pipeline, &out);
        out.extend(volatile.into_iter().filter(|&(i, _)| !dup(i)));
        (out, kept)
    }
}

/// Whether every group with a member in `list` has all its members in it
/// (`taken` marks them) and next to each other.
fn groups_whole_and_together(cur: &Current<'_>, list: &[(u32, Opt)], taken: &[bool]) -> bool {
    let Some(g) = &cur.groups else { return true };
    let mut k = 0;
    while k < list.len() {
        let unit = g.unit(&list[k].0);
        if unit.iter().any(|&m| !taken[m as usize]) {
            return false;
        }
        // The next unit.len() entries are the group's members, in push
        // order (as the pipeline places them).
        let end = k + unit.len();
        if end > list.len() || list[k..end].iter().zip(unit).any(|(e, &m)| e.0 != m) {
            return false;
        }
        k = end;
    }
    true
}

/// The First rule: F with its volatile items moved last.
fn first(cur: &Current<'_>, fresh: &Run) -> Vec<(u32, Opt)> {
    let opt = |&i: &u32| (i, cur.opt(i, &fresh.outcome));
    let stay = fresh.placed.iter().filter(|&&i| !cur.volatile[i as usize]);
    let last = fresh.placed.iter().filter(|&&i| cur.volatile[i as usize]);
    stay.chain(last).map(opt).collect()
}

/// P matched to the current list: each non-volatile entry of the previous
/// output, in order, with the current item of its identity (keyless equal
/// items in push order) when it is there, non-volatile, and allows the
/// same option.
fn match_previous(cur: &Current<'_>, state: &State) -> Vec<(Option<u32>, Opt)> {
    let mut by_id: HashMap<Ident, Vec<u32>> = HashMap::new();
    for (i, id) in cur.ids.iter().enumerate().rev() {
        if let Some(id) = id {
            by_id.entry(*id).or_default().push(i as u32);
        }
    }
    state
        .out
        .iter()
        .filter(|e| !e.volatile)
        .map(|e| {
            let i =
                e.id.and_then(|id| by_id.get_mut(&id).and_then(Vec::pop))
                    .filter(|&i| !cur.volatile[i as usize] && cur.allows(i, &e.opt));
            (i, e.opt)
        })
        .collect()
}

/// With deduplication on: whether an item is a copy (same content, neither
/// grouped) of one of `kept` (and not one of them).
fn dup_of<'c>(
    cur: &'c Current<'_>,
    pipeline: &Pipeline,
    kept: &[(u32, Opt)],
) -> impl Fn(u32) -> bool + 'c {
    let items = cur.items;
    let mut contents: HashMap<&'c str, u32> = HashMap::new();
    if pipeline.deduplication {
        for &(i, _) in kept {
            if items.group(i) == 0 {
                if let Some(c) = items.content(i) {
                    contents.insert(c, i);
                }
            }
        }
    }
    move |i: u32| {
        items.group(i) == 0
            && !cur.pinned[i as usize]
            && items
                .content(i)
                .and_then(|c| contents.get(c))
                .is_some_and(|&k| k != i)
    }
}

/// How many leading entries of `a` and `b` are the same item with the same
/// option.
fn common_prefix(a: &[Entry], b: &[Entry]) -> usize {
    a.iter()
        .zip(b)
        .take_while(|(x, y)| x.id.is_some() && x.id == y.id && x.opt == y.opt)
        .count()
}

/// The report of a session run: the output as included (in its order),
/// every other item excluded with F's reason, or `Deferred` when F took it
/// and the session did not.
fn session_report(
    cur: &Current<'_>,
    fresh: &Run,
    fresh_report: Report,
    out: &[(u32, Opt)],
    info: Info,
) -> Report {
    let items = cur.items;
    let view = items.view();
    let mut included_at = vec![false; items.len()];
    let mut included = Vec::with_capacity(out.len());
    let group = |i: u32| -> (u64, i64) {
        match cur
            .groups
            .as_ref()
            .and_then(|g| g.group(i).map(|gi| (g, gi)))
        {
            Some((g, gi)) => (g.id(gi), g.tokens(gi)),
            None => (0, view.tokens(i)),
        }
    };
    let mut selected_tokens = 0i64;
    for &(i, opt) in out {
        included_at[i as usize] = true;
        let tokens = view.tokens(i);
        let pinned = cur.pinned[i as usize];
        if !pinned {
            selected_tokens = selected_tokens.saturating_add(opt.tokens);
        }
        let reason = match opt {
            _ if pinned => Reason::Pinned,
            _ if tokens == 0 => Reason::ZeroToken,
            Opt { variant: 1.., .. } => Reason::Variant,
            Opt { cut: Some(_), .. } => Reason::Truncated,
            _ => Reason::Scored,
        };
        let (g, gt) = group(i);
        included.push(Decision {
            item: i,
            score: if pinned {
                crate::pipeline::place::PINNED_SCORE
            } else {
                cur.score(&fresh.prepared.scores, i, &opt)
            },
            reason,
            item_tokens: tokens,
            available_tokens: 0,
            related: None,
            group: g,
            group_tokens: gt,
            variant: opt.variant,
            added_tokens: opt.tokens,
            cut: opt.cut,
            content_len: items.content(i).map_or(0, str::len),
            stage: crate::pipeline::report::Stage::Place,
        });
    }
    let mut excluded: Vec<Decision> = fresh_report
        .excluded
        .iter()
        .filter(|d| !included_at[d.item as usize])
        .copied()
        .collect();
    for d in &fresh_report.included {
        if !included_at[d.item as usize] {
            let (g, gt) = group(d.item);
            excluded.push(Decision {
                item: d.item,
                score: fresh.prepared.scores[d.item as usize],
                reason: Reason::Deferred,
                item_tokens: d.item_tokens,
                available_tokens: 0,
                related: None,
                group: g,
                group_tokens: gt,
                variant: 0,
                added_tokens: 0,
                cut: None,
                content_len: 0,
                stage: crate::pipeline::report::Stage::Slice,
            });
        }
    }
    let order = crate::sort::by_value_desc(excluded.iter().map(|d| d.score));
    let excluded = order.iter().map(|&p| excluded[p as usize]).collect();
    let mut outcome = fresh_report.outcome;
    outcome.selected_tokens = selected_tokens;
    outcome.shrunk = out
        .iter()
        .filter(|(_, o)| o.variant > 0 || o.cut.is_some())
        .map(|&(i, o)| {
            let s = Shrunk {
                variant: o.variant,
                tokens: o.tokens,
                cut: o.cut,
            };
            (i, s)
        })
        .collect();
    Report {
        included,
        excluded,
        events: fresh_report.events,
        tokens_over_budget: fresh_report.tokens_over_budget,
        outcome,
        session: Some(info),
        max_tokens: fresh_report.max_tokens,
        // Set by the caller, which knows the slicer (`Session::run`).
        quotas: Vec::new(),
    }
}
