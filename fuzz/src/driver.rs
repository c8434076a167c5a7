//! The fuzz drivers, shared by the cargo-fuzz targets (fuzz/fuzz_targets)
//! and by the stable test that replays the corpus and seeded random inputs
//! (tests/fuzz_replay.rs). Input bytes are read as a program of C ABI calls.
//!
//! `abi_program` checks, after every call: statuses are documented ones,
//! failures leave handles as they were (item counts, slicer output), and on
//! every successful slice the selection is a set of distinct valid indices,
//! the report's token sum matches it, it respects the effective target
//! (count slicers' committed items aside), a second call gives the same
//! output, and a too-small buffer gets CUPEL_ERROR_BUFFER_TOO_SMALL with the
//! needed length and an untouched buffer.
//!
//! The program also sets item attributes (content, timestamp, priority,
//! pinned, hint, tags, metadata; invalid UTF-8 and out-of-range indices
//! included), scores items with random scorers, and runs random pipelines
//! (scorer, any slicer built so far, placer, deduplication, overflow
//! strategy), checking every decision is reported exactly once, the
//! report's included list is the placed output, no negative-token item is
//! selected, and a second run gives the same output.
//!
//! Sessions (docs/sessions.md, ../shared/abi-session.md): the program sets
//! keys and volatile flags (single and bulk, duplicates and 0 included),
//! keeps some of its pipelines, makes sessions from them (now and then
//! freeing the pipeline at once), sets slacks (valid and not), runs
//! sessions over the growing list (with and without reports, with buffers
//! too small), reads their stable prefix, last action and breakpoints,
//! resets and frees them. Every session has a twin made from the same
//! pipeline that sees only the successful runs, always with a report: a
//! failed run must change nothing, so the twin must agree run by run. Each
//! successful run is checked against the contract, with F (the pipeline's
//! own selection, from a copy of the pipeline the driver keeps) and the
//! previous output: see `checked_session_run`. At the end of a program no
//! handle is left alive (`cupel_live_handles`; callers run one program at a
//! time).
//!
//! Policies (docs/policies.md): every pipeline the program runs is written
//! as a policy document, read back and run again (the same placement, the
//! same text written again), now and then traced (events counted, the
//! pipeline's last). `policy_document` reads arbitrary bytes, and documents
//! built from the format's keys, as policy and budget documents: a pipeline
//! or an invalid-argument error naming `json`, never a crash or a leak.
//!
//! `versus_reference` builds small well-formed cases and compares libcupel
//! with the published cupel 1.2.0 crate (order for Greedy and Knapsack,
//! sets for the decorators, whose kind order differs by design), and whole
//! pipelines (`pipeline_ref::compare`: placed output and every decision).

#![allow(dead_code)]

use cupel::ffi::*;
use cupel_ref as r;

// The pipeline oracle, shared with tests/differential_pipeline.rs.
#[path = "pipeline_ref.rs"]
mod pipeline_ref;
use std::ffi::{c_char, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// What the drivers exercised, so a replay can check it reached the paths
/// that matter (a driver that only ever hits errors would prove nothing).
pub struct Stats {
    pub items_pushed: AtomicUsize,
    pub slices_nonempty: AtomicUsize,
    pub buffer_too_small: AtomicUsize,
    pub failures: AtomicUsize,
    pub count_slicers: AtomicUsize,
    pub stream_finishes: AtomicUsize,
    pub compared: AtomicUsize,
    /// Comparisons over a case tiled to >= 16,384 items (issue 30).
    pub large_compared: AtomicUsize,
    pub pipelines_run: AtomicUsize,
    /// Items included as a variant, and included cut (issue 27).
    pub variants_chosen: AtomicUsize,
    pub items_cut: AtomicUsize,
    /// Policy documents read, pipelines written and read back alike, and
    /// traced runs (issue 29).
    pub policies_read: AtomicUsize,
    pub policies_round_tripped: AtomicUsize,
    pub traced_runs: AtomicUsize,
    /// Successful session runs, by the rule they took.
    pub session_runs: AtomicUsize,
    pub session_firsts: AtomicUsize,
    pub session_appends: AtomicUsize,
    pub session_compactions: AtomicUsize,
    /// Successful runs whose stable prefix was not empty.
    pub session_stable: AtomicUsize,
    /// Successful runs whose output had volatile items after others.
    pub session_volatile_tails: AtomicUsize,
    /// Successful runs of a session whose pipeline was already freed.
    pub session_orphan_runs: AtomicUsize,
    /// Failed session runs: any, a buffer too small, duplicate keys.
    pub session_failures: AtomicUsize,
    pub session_too_small: AtomicUsize,
    pub session_duplicate_keys: AtomicUsize,
}

pub static STATS: Stats = Stats {
    items_pushed: AtomicUsize::new(0),
    slices_nonempty: AtomicUsize::new(0),
    buffer_too_small: AtomicUsize::new(0),
    failures: AtomicUsize::new(0),
    count_slicers: AtomicUsize::new(0),
    stream_finishes: AtomicUsize::new(0),
    compared: AtomicUsize::new(0),
    large_compared: AtomicUsize::new(0),
    pipelines_run: AtomicUsize::new(0),
    variants_chosen: AtomicUsize::new(0),
    items_cut: AtomicUsize::new(0),
    policies_read: AtomicUsize::new(0),
    policies_round_tripped: AtomicUsize::new(0),
    traced_runs: AtomicUsize::new(0),
    session_runs: AtomicUsize::new(0),
    session_firsts: AtomicUsize::new(0),
    session_appends: AtomicUsize::new(0),
    session_compactions: AtomicUsize::new(0),
    session_stable: AtomicUsize::new(0),
    session_volatile_tails: AtomicUsize::new(0),
    session_orphan_runs: AtomicUsize::new(0),
    session_failures: AtomicUsize::new(0),
    session_too_small: AtomicUsize::new(0),
    session_duplicate_keys: AtomicUsize::new(0),
};

fn bump(counter: &AtomicUsize, by: usize) {
    counter.fetch_add(by, Relaxed);
}

/// Reads values from the fuzz input; past its end every read gives 0.
struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    /// True with probability 1/n.
    fn one_in(&mut self, n: u8) -> bool {
        self.u8().is_multiple_of(n)
    }
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.u8() as usize | (self.u8() as usize) << 8) % n.max(1)
    }
    fn i64(&mut self) -> i64 {
        const SPECIAL: [i64; 12] = [
            0,
            1,
            2,
            -1,
            i64::MAX,
            i64::MIN,
            i64::MAX - 1,
            100,
            1000,
            128_000,
            1 << 32,
            1 << 62,
        ];
        match self.u8() % 4 {
            0 => SPECIAL[self.below(SPECIAL.len())],
            1 => self.below(5000) as i64,
            2 => self.below(300) as i64,
            _ => {
                let mut b = [0u8; 8];
                b.iter_mut().for_each(|x| *x = self.u8());
                i64::from_le_bytes(b)
            }
        }
    }
    fn tokens(&mut self) -> i64 {
        if self.one_in(8) {
            self.i64()
        } else {
            self.below(2000) as i64
        }
    }
    fn f64(&mut self) -> f64 {
        const SPECIAL: [f64; 12] = [
            0.0,
            -0.0,
            0.5,
            1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN_POSITIVE,
            1e-300,
            -1.0,
            1e300,
        ];
        match self.u8() % 8 {
            0 => SPECIAL[self.below(SPECIAL.len())],
            1 => {
                let mut b = [0u8; 8];
                b.iter_mut().for_each(|x| *x = self.u8());
                f64::from_le_bytes(b)
            }
            _ => self.below(101) as f64 / 100.0,
        }
    }
    fn percent(&mut self) -> f64 {
        const SPECIAL: [f64; 8] = [0.0, 1e-300, 50.0, 100.0, 100.0000001, -1.0, f64::NAN, 33.3];
        if self.one_in(3) {
            SPECIAL[self.below(SPECIAL.len())]
        } else {
            self.below(101) as f64
        }
    }
    /// A kind: usually a valid one, sometimes empty, blank or invalid UTF-8;
    /// NULL (the default kind) as a null pointer.
    fn kind(&mut self) -> Option<&'static CStr> {
        const KINDS: [&CStr; 9] = [
            c"Message",
            c"message",
            c"Document",
            c"tool",
            c"TOOL",
            c"",
            c"  \t",
            c"Doc\xff",
            c"\xc3\xbcnicode",
        ];
        // Mostly valid kinds (the first five), sometimes anything.
        let i = if self.one_in(8) {
            self.below(KINDS.len() + 1)
        } else {
            self.below(5)
        };
        KINDS.get(i).copied()
    }
}

fn kind_ptr(k: Option<&CStr>) -> *const c_char {
    k.map_or(ptr::null(), |k| k.as_ptr())
}

fn last_error() -> String {
    unsafe { CStr::from_ptr(cupel_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// A status any fallible call may return.
fn documented(st: cupel_status) {
    assert!(
        matches!(
            st,
            CUPEL_OK
                | CUPEL_ERROR_NULL_POINTER
                | CUPEL_ERROR_INVALID_ARGUMENT
                | CUPEL_ERROR_BUFFER_TOO_SMALL
                | CUPEL_ERROR_SCARCITY
                | CUPEL_ERROR_UNSUPPORTED
                | CUPEL_ERROR_CAPACITY
                | CUPEL_ERROR_OVERFLOW
        ),
        "undocumented status {st:?}: {}",
        last_error()
    );
    if st != CUPEL_OK {
        assert!(!last_error().is_empty(), "failure without a message");
        bump(&STATS.failures, 1);
    }
}

/// The slicers built so far and whether each involves a count slicer.
struct Slicers(Vec<(*mut cupel_slicer, bool)>);

impl Drop for Slicers {
    fn drop(&mut self) {
        for &(s, _) in &self.0 {
            unsafe { cupel_slicer_free(s) };
        }
    }
}

/// Bound on any knapsack table the fuzzer builds, to keep runs fast.
const FUZZ_MEMORY_LIMIT: usize = 4 << 20;
const MAX_ITEMS: usize = 300;

struct State {
    items: *mut cupel_items,
    tokens: Vec<i64>,
    /// Each item's keep-together group (0: none), as set through the ABI.
    groups: Vec<u64>,
    /// Each item's session key (0: none) and volatile flag, as set.
    keys: Vec<u64>,
    volatile: Vec<bool>,
    budget: *mut cupel_budget,
    slicers: Slicers,
    report: *mut cupel_report,
    /// The twin sessions' report, and the oracle pipelines' (F's).
    report_twin: *mut cupel_report,
    report_f: *mut cupel_report,
    /// Pipelines kept for sessions, and the sessions.
    pipelines: Vec<PipelineSlot>,
    sessions: Vec<SessionSlot>,
    /// The last key handed out by a run's bulk keying (far from the
    /// attribute ops' small keys).
    next_key: u64,
}

impl Drop for State {
    fn drop(&mut self) {
        unsafe {
            cupel_items_free(self.items);
            cupel_budget_free(self.budget);
            cupel_report_free(self.report);
            cupel_report_free(self.report_twin);
            cupel_report_free(self.report_f);
        }
    }
}

/// One slice (or marginal-items) call with a buffer of `capacity`, checked.
unsafe fn checked_slice(
    st: &State,
    slicer: *const cupel_slicer,
    has_count: bool,
    pinned: i64,
    capacity: usize,
) {
    let n = cupel_items_len(st.items);
    assert_eq!(n, st.tokens.len());
    const SENTINEL: usize = 0xDEAD_BEEF;
    let mut out = vec![SENTINEL; capacity];
    let mut len = usize::MAX;
    let status = cupel_slice(
        slicer,
        st.items,
        st.budget,
        pinned,
        if capacity == 0 {
            ptr::null_mut()
        } else {
            out.as_mut_ptr()
        },
        capacity,
        &mut len,
        st.report,
    );
    documented(status);
    match status {
        CUPEL_OK => {}
        CUPEL_ERROR_BUFFER_TOO_SMALL => {
            assert!(len > capacity, "needed {len} with capacity {capacity}");
            assert!(
                out.iter().all(|&x| x == SENTINEL),
                "buffer written on failure"
            );
            bump(&STATS.buffer_too_small, 1);
            // The needed length is exact.
            return checked_slice(st, slicer, has_count, pinned, len);
        }
        _ => {
            assert_eq!(
                cupel_report_shortfall_count(st.report),
                0,
                "report not emptied"
            );
            return;
        }
    }
    assert!(len <= capacity && len <= n);
    let selected = &out[..len];
    check_groups(selected, &st.groups, true);
    bump(&STATS.slices_nonempty, (len > 0) as usize);
    let mut sorted = selected.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), len, "duplicate indices {selected:?}");
    assert!(
        selected.iter().all(|&i| i < n),
        "index out of range {selected:?}"
    );
    assert!(
        selected.iter().all(|&i| st.tokens[i] >= 0),
        "a negative-token item was selected {selected:?}"
    );
    // What each selected item adds: its own tokens, or its variant's.
    let sum = selected.iter().enumerate().fold(0i64, |a, (k, &i)| {
        a.saturating_add(checked_choice(st, k, i).1)
    });
    assert_eq!(cupel_report_selected_tokens(st.report), sum);
    let target = cupel_report_effective_target_tokens(st.report);
    assert!(
        cupel_report_effective_max_tokens(st.report) >= target,
        "effective max below target"
    );
    if !has_count {
        assert!(
            sum <= target.max(0),
            "selected {sum} tokens, target {target}"
        );
    }
    for i in 0..cupel_report_cap_excluded_count(st.report) {
        let mut x = 0;
        assert_eq!(cupel_report_cap_excluded(st.report, i, &mut x), CUPEL_OK);
        assert!(
            x < n && !selected.contains(&x),
            "cap-excluded {x} is selected"
        );
    }
    // Determinism.
    let mut again = vec![0usize; capacity];
    let mut len2 = 0;
    let status = cupel_slice(
        slicer,
        st.items,
        st.budget,
        pinned,
        again.as_mut_ptr(),
        capacity,
        &mut len2,
        ptr::null_mut(),
    );
    assert_eq!(status, CUPEL_OK);
    assert_eq!(&again[..len2], selected, "a second call chose differently");
}

/// A scorer from the input (composites of up to three of them).
unsafe fn fuzz_scorer(input: &mut Input, depth: u32) -> *mut cupel_scorer {
    let mut s = ptr::null_mut();
    let status = match input.u8() % if depth > 0 { 10 } else { 12 } {
        0 => cupel_scorer_new_given(&mut s),
        1 => cupel_scorer_new_recency(&mut s),
        2 => cupel_scorer_new_priority(&mut s),
        3 => cupel_scorer_new_kind(ptr::null(), 0, &mut s),
        4 => {
            let w = [cupel_tag_weight {
                tag: c"a".as_ptr(),
                weight: input.f64(),
            }];
            cupel_scorer_new_tag(w.as_ptr(), 1, &mut s)
        }
        5 => cupel_scorer_new_frequency(&mut s),
        6 => cupel_scorer_new_reflexive(&mut s),
        7 => cupel_scorer_new_metadata_trust(input.f64(), &mut s),
        8 => cupel_scorer_new_metadata_key(c"k".as_ptr(), c"v".as_ptr(), input.f64(), &mut s),
        9 => {
            let w = [cupel_decay_window {
                max_age_secs: input.f64() * 1e5,
                score: input.f64(),
            }];
            cupel_scorer_new_decay(
                (input.u8() % 4) as i32,
                input.f64() * 1e5,
                w.as_ptr(),
                input.below(2),
                input.i64(),
                input.f64(),
                &mut s,
            )
        }
        10 => {
            let kids: Vec<*mut cupel_scorer> = (0..1 + input.below(3))
                .map(|_| fuzz_scorer(input, depth + 1))
                .filter(|k| !k.is_null())
                .collect();
            let consts: Vec<*const cupel_scorer> = kids.iter().map(|&k| k as *const _).collect();
            let weights: Vec<f64> = kids.iter().map(|_| input.f64()).collect();
            let st =
                cupel_scorer_new_composite(consts.as_ptr(), weights.as_ptr(), consts.len(), &mut s);
            kids.into_iter().for_each(|k| cupel_scorer_free(k));
            st
        }
        _ => {
            let inner = fuzz_scorer(input, depth + 1);
            let st = cupel_scorer_new_scaled(inner, &mut s);
            cupel_scorer_free(inner);
            st
        }
    };
    documented(status);
    assert_eq!(
        status == CUPEL_OK,
        !s.is_null(),
        "a scorer handed out on failure"
    );
    s
}

/// Sets one attribute of a (maybe out-of-range) item from the input.
unsafe fn fuzz_attribute(input: &mut Input, st: &mut State) {
    let n = st.tokens.len();
    let i = if input.one_in(16) {
        n + input.below(3)
    } else {
        input.below(n.max(1))
    };
    const CONTENTS: [&CStr; 6] = [c"a", c"b", c"same", c"", c"xÿ", c"Ã¼"];
    let text = |input: &mut Input| CONTENTS[input.below(CONTENTS.len())].as_ptr();
    let op = input.u8() % 16;
    // The items an OK call may change: `i` alone, or first..first + count.
    let mut end = i + 1;
    // Few ids, so that groups form; now and then a huge one.
    let id = |input: &mut Input| match input.one_in(8) {
        true => input.i64() as u64,
        false => input.below(5) as u64,
    };
    let status = match op {
        8 => {
            let g = id(input);
            let status = cupel_items_set_group(st.items, i, g);
            if status == CUPEL_OK {
                st.groups[i] = g;
            }
            status
        }
        9 => {
            let count = input.below(6);
            end = i + count;
            let ids: Vec<u64> = (0..count).map(|_| id(input)).collect();
            let status = cupel_items_set_groups(st.items, i, count, ids.as_ptr());
            if status == CUPEL_OK {
                st.groups[i..end].copy_from_slice(&ids);
            }
            status
        }
        10 => {
            // A variant: mostly valid values, now and then a bad one.
            let tokens = match input.one_in(8) {
                true => input.i64(),
                false => input.below(60) as i64,
            };
            const VALUES: [f64; 6] = [0.5, 1.0, 0.05, 0.0, 1.5, f64::NAN];
            let value = match input.one_in(4) {
                true => input.f64(),
                false => VALUES[input.below(VALUES.len())],
            };
            let content = match input.one_in(3) {
                true => ptr::null(),
                false => text(input),
            };
            let before = variant_count(st, i);
            let status = cupel_items_add_variant(st.items, i, tokens, value, content);
            let after = variant_count(st, i);
            match status {
                CUPEL_OK => assert_eq!(after, before.map(|c| c + 1)),
                _ => assert_eq!(after, before, "a failed add_variant changed the item"),
            }
            status
        }
        11 => {
            let keep = (input.u8() % 4) as std::ffi::c_int;
            let min = match input.one_in(8) {
                true => input.i64(),
                false => input.below(4) as i64,
            };
            // Mostly with a text worth cutting (the index may be out of range).
            if !input.one_in(4) {
                let text = c"Line 1: the quick brown fox jumps over the lazy dog. Line 2: again.";
                documented(cupel_items_set_content(st.items, i, text.as_ptr()));
            }
            cupel_items_set_truncatable(st.items, i, keep, min)
        }
        12 | 13 => {
            // Session keys: few values (duplicates and 0 are common), a
            // fresh one now and then; single or bulk.
            let key = |input: &mut Input| match input.u8() % 8 {
                0 => input.i64() as u64,
                1 => u64::MAX,
                _ => input.below(5) as u64,
            };
            let keys: Vec<u64> = match op {
                12 => vec![key(input)],
                _ => (0..input.below(6)).map(|_| key(input)).collect(),
            };
            end = i + keys.len();
            let status = match op {
                12 => cupel_items_set_key(st.items, i, keys[0]),
                _ => cupel_items_set_keys(st.items, i, keys.len(), keys.as_ptr()),
            };
            if status == CUPEL_OK {
                st.keys[i..end].copy_from_slice(&keys);
            }
            status
        }
        14 | 15 => {
            let flags: Vec<bool> = match op {
                14 => vec![input.one_in(2)],
                _ => (0..input.below(6)).map(|_| input.one_in(2)).collect(),
            };
            end = i + flags.len();
            let status = match op {
                14 => cupel_items_set_volatile(st.items, i, flags[0]),
                _ => cupel_items_set_volatile_many(st.items, i, flags.len(), flags.as_ptr()),
            };
            if status == CUPEL_OK {
                st.volatile[i..end].copy_from_slice(&flags);
            }
            status
        }
        0 => cupel_items_set_content(st.items, i, text(input)),
        1 => cupel_items_set_timestamp(st.items, i, input.i64()),
        2 => cupel_items_set_priority(st.items, i, input.i64()),
        3 => cupel_items_set_pinned(st.items, i, input.one_in(2)),
        4 => cupel_items_set_relevance_hint(st.items, i, input.f64()),
        5 => cupel_items_add_tag(st.items, i, text(input)),
        6 => cupel_items_set_metadata(st.items, i, c"cupel:trust".as_ptr(), text(input)),
        _ => {
            let count = input.below(4);
            end = i + count;
            let stamps: Vec<i64> = (0..count).map(|_| input.i64()).collect();
            cupel_items_set_timestamps(st.items, i, count, stamps.as_ptr())
        }
    };
    documented(status);
    if end > n && status == CUPEL_OK {
        panic!("attributes were set on items {i}..{end} of {n}");
    }
    assert_eq!(
        cupel_items_len(st.items),
        n,
        "an attribute changed the item count"
    );
    read_back(st, i);
    if op >= 12 {
        // Keys and flags, set or refused whole: every item as shadowed.
        for j in 0..n {
            let (mut key, mut v) = (7u64, false);
            assert_eq!(cupel_items_key(st.items, j, &mut key), CUPEL_OK);
            assert_eq!(cupel_items_volatile(st.items, j, &mut v), CUPEL_OK);
            assert_eq!((key, v), (st.keys[j], st.volatile[j]), "item {j} of {n}");
        }
    }
}

/// The variant count of item `i`, `None` out of range.
unsafe fn variant_count(st: &State, i: usize) -> Option<usize> {
    let mut c = usize::MAX;
    match cupel_items_variant_count(st.items, i, &mut c) {
        CUPEL_OK => Some(c),
        _ => None,
    }
}

/// The variant and tokens report entry `k` says item `i` was included
/// with, checked against the item: variant 0 adds the item's own tokens
/// unless it was cut; variant v is one the item has, adding its tokens.
unsafe fn checked_choice(st: &State, k: usize, i: usize) -> (usize, i64) {
    checked_choice_in(st, st.report, k, i)
}

/// `checked_choice` on a given report.
unsafe fn checked_choice_in(
    st: &State,
    report: *const cupel_report,
    k: usize,
    i: usize,
) -> (usize, i64) {
    let (mut v, mut t) = (usize::MAX, i64::MIN);
    assert_eq!(
        cupel_report_included_variant(report, k, &mut v, &mut t),
        CUPEL_OK
    );
    let (mut head, mut tail) = (usize::MAX, usize::MAX);
    assert_eq!(
        cupel_report_included_cut(report, k, &mut head, &mut tail),
        CUPEL_OK
    );
    let (mut content, mut len) = (ptr::null(), 0usize);
    assert_eq!(
        cupel_items_content(st.items, i, &mut content, &mut len),
        CUPEL_OK
    );
    assert!(
        head <= tail && tail <= len,
        "cut {head}..{tail} of {len} bytes"
    );
    let mut d = std::mem::zeroed::<cupel_decision>();
    assert_eq!(cupel_report_included(report, k, &mut d), CUPEL_OK);
    if v == 0 {
        assert_ne!(d.reason, CUPEL_REASON_VARIANT as i32);
        if d.reason == CUPEL_REASON_TRUNCATED as i32 {
            // Cut by the fill step: what is kept, as the tokenizer counts it.
            assert!(t >= 0 && !content.is_null(), "item {i} cut to {t} tokens");
            bump(&STATS.items_cut, 1);
        } else {
            assert_eq!(
                (t, head, tail),
                (st.tokens[i], len, len),
                "item {i} included whole"
            );
        }
    } else {
        let (mut vt, mut value) = (0i64, 0f64);
        let status = cupel_items_variant(
            st.items,
            i,
            v,
            &mut vt,
            &mut value,
            ptr::null_mut(),
            ptr::null_mut(),
        );
        assert_eq!(status, CUPEL_OK, "variant {v} of item {i}");
        assert_eq!((t, head, tail), (vt, len, len));
        assert!(value > 0.0 && value <= 1.0);
        assert_eq!(d.reason, CUPEL_REASON_VARIANT as i32);
        bump(&STATS.variants_chosen, 1);
    }
    (v, t)
}

/// Reads item `i` (maybe out of range) back with every getter: an index
/// out of range fails for each one and writes nothing; in range, tokens and
/// group agree with what was pushed and set, and every string is UTF-8.
unsafe fn read_back(st: &State, i: usize) {
    let n = st.tokens.len();
    let (mut t, mut d, mut g, mut b, mut present) = (-7i64, -7.0f64, 7u64, false, false);
    let (mut p, mut len, mut count) = (ptr::null::<c_char>(), 7usize, 7usize);
    let (mut k, mut klen) = (ptr::null::<c_char>(), 7usize);
    let text = |p: *const c_char, len: usize| {
        if !p.is_null() {
            let bytes = std::slice::from_raw_parts(p as *const u8, len);
            assert!(
                std::str::from_utf8(bytes).is_ok(),
                "a getter gave non-UTF-8"
            );
        }
    };
    let statuses = [
        cupel_items_tokens(st.items, i, &mut t),
        cupel_items_score(st.items, i, &mut d),
        cupel_items_kind(st.items, i, &mut p, &mut len),
        cupel_items_content(st.items, i, &mut p, &mut len),
        cupel_items_source(st.items, i, &mut p, &mut len),
        cupel_items_timestamp(st.items, i, &mut present, &mut t),
        cupel_items_priority(st.items, i, &mut present, &mut t),
        cupel_items_relevance_hint(st.items, i, &mut present, &mut d),
        cupel_items_pinned(st.items, i, &mut b),
        cupel_items_group(st.items, i, &mut g),
        cupel_items_tag_count(st.items, i, &mut count),
        cupel_items_metadata_count(st.items, i, &mut count),
        cupel_items_key(st.items, i, &mut g),
        cupel_items_volatile(st.items, i, &mut b),
    ];
    for status in statuses {
        documented(status);
        assert_eq!(
            status == CUPEL_OK,
            i < n,
            "item {i} of {n} read back: {status:?}"
        );
    }
    if i >= n {
        assert_eq!((t, g, len, count), (-7, 7, 7, 7), "a failed getter wrote");
        return;
    }
    assert_eq!(cupel_items_tokens(st.items, i, &mut t), CUPEL_OK);
    assert_eq!(t, st.tokens[i], "item {i}'s tokens read back");
    assert_eq!(cupel_items_group(st.items, i, &mut g), CUPEL_OK);
    assert_eq!(g, st.groups[i], "item {i}'s group read back");
    assert_eq!(cupel_items_key(st.items, i, &mut g), CUPEL_OK);
    assert_eq!(g, st.keys[i], "item {i}'s key read back");
    assert_eq!(cupel_items_volatile(st.items, i, &mut b), CUPEL_OK);
    assert_eq!(b, st.volatile[i], "item {i}'s volatile flag read back");
    for get in [cupel_items_kind, cupel_items_content, cupel_items_source] {
        assert_eq!(get(st.items, i, &mut p, &mut len), CUPEL_OK);
        text(p, len);
    }
    assert_eq!(cupel_items_tag_count(st.items, i, &mut count), CUPEL_OK);
    for j in 0..count + 1 {
        let status = cupel_items_tag(st.items, i, j, &mut p, &mut len);
        assert_eq!(status == CUPEL_OK, j < count, "tag {j} of {count}");
        if status == CUPEL_OK {
            text(p, len);
        }
    }
    assert_eq!(
        cupel_items_metadata_count(st.items, i, &mut count),
        CUPEL_OK
    );
    for j in 0..count + 1 {
        let status =
            cupel_items_metadata_entry(st.items, i, j, &mut k, &mut klen, &mut p, &mut len);
        assert_eq!(
            status == CUPEL_OK,
            j < count,
            "metadata entry {j} of {count}"
        );
        if status == CUPEL_OK {
            text(k, klen);
            text(p, len);
        }
    }
}

/// Keep-together groups (docs/groups.md): every group of `groups` is in
/// `out` whole or not at all, and (when `placed`) its members stand next
/// to each other in push order.
fn check_groups(out: &[usize], groups: &[u64], placed: bool) {
    let mut at = vec![usize::MAX; groups.len()];
    for (p, &i) in out.iter().enumerate() {
        at[i] = p;
    }
    let mut members: std::collections::HashMap<u64, Vec<usize>> = Default::default();
    for (i, &g) in groups.iter().enumerate() {
        if g != 0 {
            members.entry(g).or_default().push(i);
        }
    }
    for (g, m) in members {
        let chosen = m.iter().filter(|&&i| at[i] != usize::MAX).count();
        assert!(
            chosen == 0 || chosen == m.len(),
            "group {g} {m:?} split: {out:?}"
        );
        if placed && chosen > 0 {
            let first = at[m[0]];
            assert!(
                m.iter().enumerate().all(|(k, &i)| at[i] == first + k),
                "group {g} {m:?} not together in push order: {out:?}"
            );
        }
    }
}

/// One pipeline run with a random configuration, checked. The pipeline
/// is then kept for sessions (always with `keep`, now and then without).
unsafe fn fuzz_pipeline(input: &mut Input, st: &mut State, keep: bool) {
    let n = st.tokens.len();
    let scorer = if input.one_in(4) {
        ptr::null_mut()
    } else {
        fuzz_scorer(input, 0)
    };
    let (slicer, has_count) = st.slicers.0[input.below(st.slicers.0.len())];
    let mut placer = ptr::null_mut();
    match input.u8() % 3 {
        0 => assert_eq!(cupel_placer_new_chronological(&mut placer), CUPEL_OK),
        1 => assert_eq!(cupel_placer_new_u_shaped(&mut placer), CUPEL_OK),
        _ => {}
    }
    let (with_tokenizer, dedup, overflow) =
        (!input.one_in(4), input.one_in(2), (input.u8() % 4) as i32);
    // Two alike: the one the program uses (and may free), and the oracle
    // the driver keeps to compute F for the sessions made from it.
    let mut made = [ptr::null_mut(); 2];
    for p in &mut made {
        assert_eq!(cupel_pipeline_new(scorer, slicer, placer, p), CUPEL_OK);
        // Truncatable items need a tokenizer: mostly given, now and then not.
        if with_tokenizer {
            assert_eq!(cupel_pipeline_set_tokenizer(*p, tokenizer()), CUPEL_OK);
        }
        assert_eq!(cupel_pipeline_set_deduplication(*p, dedup), CUPEL_OK);
        documented(cupel_pipeline_set_overflow(*p, overflow));
    }
    cupel_scorer_free(scorer);
    cupel_placer_free(placer);
    let [p, oracle] = made;
    let oracle = std::rc::Rc::new(Oracle {
        p: oracle,
        has_count,
        dedup,
        proceed: overflow == CUPEL_OVERFLOW_PROCEED as i32,
    });
    let capacity = if input.one_in(8) {
        input.below(n + 1)
    } else {
        n
    };
    let mut out = vec![usize::MAX; capacity];
    let mut len = usize::MAX;
    let status = cupel_pipeline_run(
        p,
        st.items,
        st.budget,
        out.as_mut_ptr(),
        capacity,
        &mut len,
        st.report,
    );
    documented(status);
    if status == CUPEL_OK {
        bump(&STATS.pipelines_run, 1);
        let placed = &out[..len];
        check_groups(placed, &st.groups, true);
        let mut seen = vec![0u8; n];
        assert_eq!(cupel_report_included_count(st.report), len);
        for (k, &i) in placed.iter().enumerate() {
            assert!(i < n && st.tokens[i] >= 0, "placed {i} of {n} ({placed:?})");
            let mut d = std::mem::zeroed::<cupel_decision>();
            assert_eq!(cupel_report_included(st.report, k, &mut d), CUPEL_OK);
            assert_eq!(d.item_index, i, "the report's included list is the output");
            seen[i] += 1;
            checked_choice(st, k, i);
        }
        for k in 0..cupel_report_excluded_count(st.report) {
            let mut d = std::mem::zeroed::<cupel_decision>();
            assert_eq!(cupel_report_excluded(st.report, k, &mut d), CUPEL_OK);
            seen[d.item_index] += 1;
            if st.tokens[d.item_index] < 0 {
                assert_eq!(d.reason, CUPEL_REASON_NEGATIVE_TOKENS as i32);
            }
        }
        assert!(
            seen.iter().all(|&c| c == 1),
            "every item decided once: {seen:?}"
        );
        let mut json_len = 0;
        let st_json = cupel_report_json(st.report, st.items, ptr::null_mut(), 0, &mut json_len);
        assert!(st_json == CUPEL_ERROR_BUFFER_TOO_SMALL && json_len > 0);
        let mut again = vec![0usize; capacity];
        let mut len2 = 0;
        let status = cupel_pipeline_run(
            p,
            st.items,
            st.budget,
            again.as_mut_ptr(),
            capacity,
            &mut len2,
            ptr::null_mut(),
        );
        assert_eq!(status, CUPEL_OK);
        assert_eq!(&again[..len2], placed, "a second run placed differently");
        checked_policy_round_trip(p, st, placed, input.one_in(2));
    } else {
        assert_eq!(
            cupel_report_included_count(st.report),
            0,
            "report not emptied"
        );
        if status == CUPEL_ERROR_BUFFER_TOO_SMALL {
            assert!(len > capacity && out.iter().all(|&x| x == usize::MAX));
        }
    }
    if keep || input.one_in(3) {
        if st.pipelines.len() >= 4 {
            st.pipelines.remove(0);
        }
        st.pipelines.push(PipelineSlot { p, oracle });
    } else {
        cupel_pipeline_free(p);
    }
}

// ---------------------------------------------------------------- sessions

/// A pipeline copy the driver keeps to compute F (the pipeline's own
/// selection) for the sessions made from its twin.
struct Oracle {
    p: *mut cupel_pipeline,
    has_count: bool,
    dedup: bool,
    /// Its overflow strategy is CUPEL_OVERFLOW_PROCEED (over the target).
    proceed: bool,
}

impl Drop for Oracle {
    fn drop(&mut self) {
        unsafe { cupel_pipeline_free(self.p) };
    }
}

/// A pipeline the program keeps for sessions, with its oracle.
struct PipelineSlot {
    p: *mut cupel_pipeline,
    oracle: std::rc::Rc<Oracle>,
}

impl Drop for PipelineSlot {
    fn drop(&mut self) {
        unsafe { cupel_pipeline_free(self.p) };
    }
}

/// An item's identity from one session run to the next, as the contract
/// defines it: its key with its tokens and content, or, keyless, its kind,
/// tokens and content. An item with neither key nor content has none (and
/// is volatile).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Ident {
    Keyed(u64, i64, Option<Vec<u8>>),
    Keyless(Vec<u8>, i64, Vec<u8>),
}

/// The option an output item was included with (from a report).
#[derive(Debug, Clone, PartialEq)]
struct Opt {
    variant: usize,
    /// The tokens it adds.
    tokens: i64,
    cut: Option<(usize, usize)>,
    /// The variant's content (a variant is its tokens and content).
    variant_content: Option<Vec<u8>>,
}

impl Opt {
    fn plain(&self) -> bool {
        self.variant == 0 && self.cut.is_none()
    }
}

/// One item of a session's output, as the driver remembers it.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    item: usize,
    id: Option<Ident>,
    opt: Opt,
    volatile: bool,
}

/// Whether two output entries are the same item with the same option
/// (the stable prefix's test).
fn same(a: &Entry, b: &Entry) -> bool {
    a.id.is_some() && a.id == b.id && a.opt == b.opt
}

/// What a session's getters say.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    action: cupel_session_action,
    stable: (usize, i64),
    breakpoints: Vec<cupel_breakpoint>,
    slack: f64,
}

impl Seen {
    /// A new or reset session's.
    fn fresh(slack: f64) -> Seen {
        Seen {
            action: CUPEL_SESSION_FIRST,
            stable: (0, 0),
            breakpoints: vec![],
            slack,
        }
    }
}

/// The previous successful run of a session.
struct Prev {
    out: Vec<Entry>,
    /// The identities of its list, with their counts.
    list: std::collections::HashMap<Ident, usize>,
}

/// A session of the program, its twin (same pipeline, only the successful
/// runs, always with a report) and what the driver expects of both.
struct SessionSlot {
    s: *mut cupel_session,
    twin: *mut cupel_session,
    oracle: std::rc::Rc<Oracle>,
    seen: Seen,
    prev: Option<Prev>,
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        unsafe {
            cupel_session_free(self.s);
            cupel_session_free(self.twin);
        }
    }
}

/// Reads every getter of a session (each buffer rule on the way).
unsafe fn seen(s: *const cupel_session) -> Seen {
    let mut action = CUPEL_SESSION_COMPACT;
    assert_eq!(cupel_session_last_action(s, &mut action), CUPEL_OK);
    let (mut items, mut tokens) = (usize::MAX, i64::MIN);
    assert_eq!(
        cupel_session_stable_prefix(s, &mut items, &mut tokens),
        CUPEL_OK
    );
    let (mut only_items, mut only_tokens) = (usize::MAX, i64::MIN);
    assert_eq!(
        cupel_session_stable_prefix(s, &mut only_items, ptr::null_mut()),
        CUPEL_OK
    );
    assert_eq!(
        cupel_session_stable_prefix(s, ptr::null_mut(), &mut only_tokens),
        CUPEL_OK
    );
    assert_eq!((only_items, only_tokens), (items, tokens));
    const UNSET: cupel_breakpoint = cupel_breakpoint {
        items: 7,
        tokens: 7,
        mark: 7,
    };
    let mut needed = usize::MAX;
    let status = cupel_session_breakpoints(s, ptr::null_mut(), 0, &mut needed);
    assert!(needed <= 4, "{needed} breakpoints");
    assert_eq!(
        status,
        if needed == 0 {
            CUPEL_OK
        } else {
            CUPEL_ERROR_BUFFER_TOO_SMALL
        }
    );
    let mut bps = [UNSET; 4];
    if needed > 0 {
        let mut len = usize::MAX;
        let status = cupel_session_breakpoints(s, bps.as_mut_ptr(), needed - 1, &mut len);
        assert_eq!((status, len), (CUPEL_ERROR_BUFFER_TOO_SMALL, needed));
        assert!(bps.iter().all(|b| *b == UNSET), "buffer written on failure");
    }
    let mut len = usize::MAX;
    assert_eq!(
        cupel_session_breakpoints(s, bps.as_mut_ptr(), 4, &mut len),
        CUPEL_OK
    );
    assert_eq!(len, needed);
    let mut slack = f64::NAN;
    assert_eq!(cupel_session_slack(s, &mut slack), CUPEL_OK);
    Seen {
        action,
        stable: (items, tokens),
        breakpoints: bps[..len].to_vec(),
        slack,
    }
}

unsafe fn bytes(p: *const c_char, len: usize) -> Option<Vec<u8>> {
    (!p.is_null()).then(|| std::slice::from_raw_parts(p as *const u8, len).to_vec())
}

/// Every item as a session sees it now.
struct Now {
    ids: Vec<Option<Ident>>,
    /// Volatile as a session places it: marked, or with neither key nor
    /// content, or in a group with such a member.
    volatile: Vec<bool>,
    /// Marked pinned (`cupel_items_set_pinned`).
    marked: Vec<bool>,
    /// Pinned as the pipeline takes it: marked, or in a group with a
    /// marked member (docs/groups.md).
    pinned: Vec<bool>,
    content: Vec<Option<Vec<u8>>>,
}

unsafe fn now(st: &State) -> Now {
    let n = st.tokens.len();
    let mut w = Now {
        ids: Vec::with_capacity(n),
        volatile: Vec::with_capacity(n),
        marked: Vec::with_capacity(n),
        pinned: Vec::with_capacity(n),
        content: Vec::with_capacity(n),
    };
    for i in 0..n {
        let (mut p, mut len) = (ptr::null(), 0usize);
        assert_eq!(cupel_items_content(st.items, i, &mut p, &mut len), CUPEL_OK);
        let content = bytes(p, len);
        let id = match (st.keys[i], &content) {
            (0, None) => None,
            (0, Some(c)) => {
                assert_eq!(cupel_items_kind(st.items, i, &mut p, &mut len), CUPEL_OK);
                let kind = bytes(p, len).unwrap_or_default();
                Some(Ident::Keyless(kind, st.tokens[i], c.clone()))
            }
            (key, c) => Some(Ident::Keyed(key, st.tokens[i], c.clone())),
        };
        let (mut pinned, mut volatile) = (false, false);
        assert_eq!(cupel_items_pinned(st.items, i, &mut pinned), CUPEL_OK);
        assert_eq!(cupel_items_volatile(st.items, i, &mut volatile), CUPEL_OK);
        assert_eq!(volatile, st.volatile[i], "item {i}'s volatile flag");
        w.volatile.push(st.volatile[i] || id.is_none());
        w.ids.push(id);
        w.marked.push(pinned);
        w.content.push(content);
    }
    let pinned_groups: std::collections::HashSet<u64> = (0..n)
        .filter(|&i| st.groups[i] != 0 && w.marked[i])
        .map(|i| st.groups[i])
        .collect();
    w.pinned = (0..n)
        .map(|i| w.marked[i] || pinned_groups.contains(&st.groups[i]))
        .collect();
    let volatile_groups: std::collections::HashSet<u64> = (0..n)
        .filter(|&i| st.groups[i] != 0 && w.volatile[i])
        .map(|i| st.groups[i])
        .collect();
    for i in 0..n {
        w.volatile[i] |= volatile_groups.contains(&st.groups[i]);
    }
    w
}

/// A report's included list: each item with its option.
unsafe fn options(st: &State, report: *const cupel_report) -> Vec<(usize, Opt)> {
    (0..cupel_report_included_count(report))
        .map(|k| {
            let mut d = std::mem::zeroed::<cupel_decision>();
            assert_eq!(cupel_report_included(report, k, &mut d), CUPEL_OK);
            let i = d.item_index;
            let (variant, tokens) = checked_choice_in(st, report, k, i);
            let cut = (d.reason == CUPEL_REASON_TRUNCATED as i32).then(|| {
                let (mut head, mut tail) = (0, 0);
                assert_eq!(
                    cupel_report_included_cut(report, k, &mut head, &mut tail),
                    CUPEL_OK
                );
                (head, tail)
            });
            let variant_content = match variant {
                0 => None,
                v => {
                    let (mut t, mut value, mut p, mut len) = (0, 0.0, ptr::null(), 0);
                    let status =
                        cupel_items_variant(st.items, i, v, &mut t, &mut value, &mut p, &mut len);
                    assert_eq!(status, CUPEL_OK);
                    bytes(p, len)
                }
            };
            let opt = Opt {
                variant,
                tokens,
                cut,
                variant_content,
            };
            (i, opt)
        })
        .collect()
}

/// The first pair of items with the same non-zero key.
fn duplicate_keys(keys: &[u64]) -> Option<(usize, usize)> {
    let mut first = std::collections::HashMap::new();
    for (i, &k) in keys.iter().enumerate() {
        if k != 0 {
            if let Some(&j) = first.get(&k) {
                return Some((j, i));
            }
            first.insert(k, i);
        }
    }
    None
}

/// The sum of the tokens `list` adds, `pinned` items aside.
fn unpinned_tokens<'a>(pinned: &[bool], list: impl IntoIterator<Item = (usize, &'a Opt)>) -> i64 {
    list.into_iter()
        .filter(|&(i, _)| !pinned[i])
        .fold(0i64, |a, (_, o)| a.saturating_add(o.tokens))
}

/// Why Append fails when N takes a group's new members without the others.
const SPLIT_GROUP: &str = "P, N and V do not hold every group whole";

/// What the contract's Append rule says of this run.
enum AppendRule {
    /// It applies: the output is P, then N, then (maybe more) V.
    Applies {
        p: Vec<usize>,
        n: Vec<usize>,
        v: Vec<usize>,
    },
    /// It does not: the run compacts.
    Fails(&'static str),
}

/// The Append rule from the contract, on its own: P (the previous output's
/// non-volatile items, matched to this list by identity, equal keyless
/// items in push order), N (F's non-volatile items not in P that are
/// pinned or new), V (F's volatile items), deduplication against P, and
/// whether they fit the effective target.
unsafe fn append_rule(
    st: &State,
    w: &Now,
    prev: &Prev,
    f: &[(usize, Opt)],
    dedup: bool,
    target: i64,
) -> AppendRule {
    let n = st.tokens.len();
    let mut by_id: std::collections::HashMap<&Ident, std::collections::VecDeque<usize>> =
        Default::default();
    for (i, id) in w.ids.iter().enumerate() {
        if let Some(id) = id {
            by_id.entry(id).or_default().push_back(i);
        }
    }
    let mut p = vec![];
    for e in prev.out.iter().filter(|e| !e.volatile) {
        let matched =
            e.id.as_ref()
                .and_then(|id| by_id.get_mut(id).and_then(|q| q.pop_front()));
        let Some(i) = matched else {
            return AppendRule::Fails("an item of P left the list");
        };
        if w.volatile[i] {
            return AppendRule::Fails("an item of P is volatile now");
        }
        if e.opt.variant > 0 {
            let (mut t, mut value, mut c, mut len) = (0, 0.0, ptr::null(), 0);
            let status = cupel_items_variant(
                st.items,
                i,
                e.opt.variant,
                &mut t,
                &mut value,
                &mut c,
                &mut len,
            );
            let same_variant =
                status == CUPEL_OK && t == e.opt.tokens && bytes(c, len) == e.opt.variant_content;
            if w.pinned[i] || !same_variant {
                return AppendRule::Fails("an item of P can no longer have its variant");
            }
        }
        if let Some((head, tail)) = e.opt.cut {
            let (mut truncatable, mut keep, mut min) = (false, 0, 0);
            let status =
                cupel_items_truncatable(st.items, i, &mut truncatable, &mut keep, &mut min);
            assert_eq!(status, CUPEL_OK);
            let len = w.content[i].as_ref().map_or(0, Vec::len);
            if !truncatable || w.pinned[i] || head > tail || tail > len {
                return AppendRule::Fails("an item of P can no longer be cut as it was");
            }
        }
        p.push(i);
    }
    let mut in_p = vec![false; n];
    for &i in &p {
        in_p[i] = true;
    }
    for &i in &p {
        let g = st.groups[i];
        if g != 0 && (0..n).any(|m| st.groups[m] == g && !in_p[m]) {
            return AppendRule::Fails("a group straddles P");
        }
    }
    // Every group of P next to itself in P (a group is placed as one).
    for (k, &i) in p.iter().enumerate() {
        let g = st.groups[i];
        let at: Vec<usize> = (0..p.len()).filter(|&x| st.groups[p[x]] == g).collect();
        let in_order = at.windows(2).all(|w| p[w[0]] < p[w[1]]);
        if g != 0 && at[0] == k && (at.last().unwrap() - k + 1 != at.len() || !in_order) {
            return AppendRule::Fails("a group of P is not together, in push order");
        }
    }
    let mut contents = std::collections::HashMap::new();
    if dedup {
        for &i in &p {
            if let (0, Some(c)) = (st.groups[i], &w.content[i]) {
                contents.insert(c.clone(), i);
            }
        }
    }
    let dup = |i: usize| {
        st.groups[i] == 0
            && !w.pinned[i]
            && w.content[i]
                .as_ref()
                .and_then(|c| contents.get(c))
                .is_some_and(|&k| k != i)
    };
    // New: beyond the count of its identity in the previous list (equal
    // items in push order).
    let mut counts: std::collections::HashMap<&Ident, usize> = Default::default();
    let new: Vec<bool> = w
        .ids
        .iter()
        .map(|id| match id {
            None => false,
            Some(id) => {
                let c = counts.entry(id).or_insert(0);
                *c += 1;
                *c > prev.list.get(id).copied().unwrap_or(0)
            }
        })
        .collect();
    let mut n_items = vec![];
    let mut v_items = vec![];
    for &(i, _) in f {
        if in_p[i] || dup(i) {
            continue;
        }
        if w.volatile[i] {
            v_items.push(i);
        } else if w.pinned[i] || new[i] {
            n_items.push(i);
        }
    }
    let mut chosen = in_p.clone();
    for &i in n_items.iter().chain(&v_items) {
        chosen[i] = true;
    }
    for i in (0..n).filter(|&i| chosen[i] && st.groups[i] != 0) {
        if (0..n).any(|m| st.groups[m] == st.groups[i] && !chosen[m]) {
            return AppendRule::Fails(SPLIT_GROUP);
        }
    }
    let prev_opts = prev.out.iter().filter(|e| !e.volatile).map(|e| &e.opt);
    let f_opt = |i: usize| &f.iter().find(|x| x.0 == i).unwrap().1;
    // Pinned as Classify has it: a group with a pinned member is pinned.
    let pinned = &w.pinned;
    let used = unpinned_tokens(pinned, p.iter().copied().zip(prev_opts))
        .saturating_add(unpinned_tokens(
            pinned,
            n_items.iter().map(|&i| (i, f_opt(i))),
        ))
        .saturating_add(unpinned_tokens(
            pinned,
            v_items.iter().map(|&i| (i, f_opt(i))),
        ));
    if used > target {
        return AppendRule::Fails("P, N and V do not fit");
    }
    AppendRule::Applies {
        p,
        n: n_items,
        v: v_items,
    }
}

/// One session operation from the input.
unsafe fn fuzz_session(input: &mut Input, st: &mut State) {
    let op = input.u8() % 16;
    if st.sessions.is_empty() || op < 2 {
        return new_session(input, st);
    }
    let k = input.below(st.sessions.len());
    match op {
        2 => {
            const SLACKS: [f64; 12] = [
                0.0,
                -0.0,
                0.1,
                0.2,
                0.5,
                0.9,
                0.999,
                1.0,
                -0.1,
                f64::NAN,
                f64::INFINITY,
                1e-300,
            ];
            let v = match input.one_in(4) {
                true => input.f64(),
                false => SLACKS[input.below(SLACKS.len())],
            };
            let slot = &mut st.sessions[k];
            let status = cupel_session_set_slack(slot.s, v);
            documented(status);
            assert_eq!(
                status == CUPEL_OK,
                (0.0..1.0).contains(&v),
                "slack {v}: {status:?}"
            );
            if status == CUPEL_OK {
                assert_eq!(cupel_session_set_slack(slot.twin, v), CUPEL_OK);
                slot.seen.slack = v;
            }
            assert_eq!(seen(slot.s), slot.seen, "after setting the slack to {v}");
        }
        3 => {
            let slot = &mut st.sessions[k];
            assert_eq!(cupel_session_reset(slot.s), CUPEL_OK);
            assert_eq!(cupel_session_reset(slot.twin), CUPEL_OK);
            slot.seen = Seen::fresh(slot.seen.slack);
            slot.prev = None;
            assert_eq!(seen(slot.s), slot.seen, "after a reset");
        }
        4 => {
            st.sessions.swap_remove(k);
        }
        5 if !st.pipelines.is_empty() => {
            // Free a pipeline: its sessions keep working.
            st.pipelines.remove(input.below(st.pipelines.len()));
        }
        6 => null_session_calls(st, k),
        7..=9 => {
            // A few turns of a conversation: each pushes some items (with
            // contents now and then, a pinned or grouped one rarely) and
            // runs the session.
            for _ in 0..1 + input.below(4) {
                for _ in 0..1 + input.below(3) {
                    if st.tokens.len() >= MAX_ITEMS {
                        break;
                    }
                    let t = input.below(400) as i64;
                    let status = cupel_items_push(st.items, t, input.f64(), kind_ptr(input.kind()));
                    documented(status);
                    if status != CUPEL_OK {
                        continue;
                    }
                    let i = st.tokens.len();
                    st.tokens.push(t);
                    st.groups.push(0);
                    st.keys.push(0);
                    st.volatile.push(false);
                    bump(&STATS.items_pushed, 1);
                    match input.u8() % 16 {
                        0..=3 => {
                            const TEXTS: [&CStr; 3] = [c"turn", c"tool result", c"same"];
                            let text = TEXTS[input.below(TEXTS.len())];
                            assert_eq!(
                                cupel_items_set_content(st.items, i, text.as_ptr()),
                                CUPEL_OK
                            );
                        }
                        4 => assert_eq!(cupel_items_set_pinned(st.items, i, true), CUPEL_OK),
                        5 | 6 => {
                            // Grouped with the item before it.
                            let g = match st.groups.get(i.wrapping_sub(1)) {
                                Some(&g) if g != 0 => g,
                                _ => 1 + input.below(3) as u64,
                            };
                            assert_eq!(cupel_items_set_group(st.items, i, g), CUPEL_OK);
                            st.groups[i] = g;
                        }
                        _ => {}
                    }
                }
                checked_session_run(input, st, k);
            }
        }
        _ => checked_session_run(input, st, k),
    }
}

/// A session from one of the kept pipelines (a new one now and then), with
/// its twin; sometimes the pipeline is freed at once.
unsafe fn new_session(input: &mut Input, st: &mut State) {
    if st.pipelines.is_empty() || input.one_in(4) {
        fuzz_pipeline(input, st, true);
    }
    let at = input.below(st.pipelines.len());
    let (mut s, mut twin) = (ptr::null_mut(), ptr::null_mut());
    assert_eq!(cupel_session_new(st.pipelines[at].p, &mut s), CUPEL_OK);
    assert_eq!(cupel_session_new(st.pipelines[at].p, &mut twin), CUPEL_OK);
    let slot = SessionSlot {
        s,
        twin,
        oracle: st.pipelines[at].oracle.clone(),
        seen: Seen::fresh(0.2),
        prev: None,
    };
    assert_eq!(seen(s), slot.seen, "a new session");
    if input.one_in(3) {
        st.pipelines.remove(at);
    }
    if st.sessions.len() >= 3 {
        st.sessions.swap_remove(input.below(3));
    }
    st.sessions.push(slot);
}

/// NULL where a handle or out-pointer is required: documented failures
/// that change nothing.
unsafe fn null_session_calls(st: &State, k: usize) {
    let slot = &st.sessions[k];
    let mut s = ptr::null_mut();
    let mut len = 7usize;
    let mut out = [0usize; 1];
    let mut action = CUPEL_SESSION_APPEND;
    let mut bp = [cupel_breakpoint {
        items: 0,
        tokens: 0,
        mark: 0,
    }];
    let statuses = [
        cupel_session_new(ptr::null(), &mut s),
        cupel_session_run(
            ptr::null_mut(),
            st.items,
            st.budget,
            out.as_mut_ptr(),
            1,
            &mut len,
            ptr::null_mut(),
        ),
        cupel_session_run(
            slot.s,
            ptr::null(),
            st.budget,
            out.as_mut_ptr(),
            1,
            &mut len,
            st.report,
        ),
        cupel_session_run(
            slot.s,
            st.items,
            ptr::null(),
            out.as_mut_ptr(),
            1,
            &mut len,
            ptr::null_mut(),
        ),
        cupel_session_run(
            slot.s,
            st.items,
            st.budget,
            out.as_mut_ptr(),
            1,
            ptr::null_mut(),
            ptr::null_mut(),
        ),
        cupel_session_set_slack(ptr::null_mut(), 0.5),
        cupel_session_stable_prefix(ptr::null(), &mut len, ptr::null_mut()),
        cupel_session_reset(ptr::null_mut()),
        cupel_session_last_action(ptr::null(), &mut action),
        cupel_session_last_action(slot.s, ptr::null_mut()),
        cupel_session_breakpoints(slot.s, ptr::null_mut(), 1, &mut len),
        cupel_session_breakpoints(slot.s, bp.as_mut_ptr(), 1, ptr::null_mut()),
        cupel_session_slack(slot.s, ptr::null_mut()),
        cupel_items_set_key(ptr::null_mut(), 0, 1),
        cupel_items_set_keys(st.items, 0, 1, ptr::null()),
        cupel_items_set_volatile(ptr::null_mut(), 0, true),
        cupel_items_set_volatile_many(st.items, 0, 1, ptr::null()),
        cupel_items_key(st.items, 0, ptr::null_mut()),
        cupel_items_volatile(ptr::null(), 0, ptr::null_mut()),
    ];
    for (at, status) in statuses.into_iter().enumerate() {
        documented(status);
        assert_eq!(status, CUPEL_ERROR_NULL_POINTER, "call {at}");
    }
    assert!(s.is_null());
    assert_eq!(len, 7, "written on failure");
    assert_eq!(action, CUPEL_SESSION_APPEND, "written on failure");
    cupel_session_free(ptr::null_mut());
    assert_eq!(seen(slot.s), slot.seen, "a failed call changed the session");
}

/// One session run, checked: the failures change nothing (the getters
/// read the same, and the twin, which never sees them, agrees on the next
/// run); a success agrees with the twin (with its report), and obeys the
/// contract (`check_session_output`).
unsafe fn checked_session_run(input: &mut Input, st: &mut State, k: usize) {
    let n = st.tokens.len();
    // Usually every keyless item gets a key of its own first: keyless items
    // without content would all be volatile.
    if n > 0 && !input.one_in(3) {
        let mut keys = st.keys.clone();
        for key in keys.iter_mut().filter(|k| **k == 0) {
            st.next_key += 1;
            *key = st.next_key;
        }
        assert_eq!(
            cupel_items_set_keys(st.items, 0, n, keys.as_ptr()),
            CUPEL_OK
        );
        st.keys = keys;
        // And now and then the newest items are marked volatile.
        if input.one_in(3) {
            let count = input.below(4).min(n);
            let flags = vec![true; count];
            let status = cupel_items_set_volatile_many(st.items, n - count, count, flags.as_ptr());
            assert_eq!(status, CUPEL_OK);
            st.volatile[n - count..].fill(true);
        }
    }
    let capacity = match input.u8() % 8 {
        0 => input.below(n + 1),
        1 => 0,
        _ => n,
    };
    let report = match input.one_in(3) {
        true => ptr::null_mut(),
        false => st.report,
    };
    let slot = &st.sessions[k];
    let before = seen(slot.s);
    assert_eq!(before, slot.seen, "the session changed between runs");
    // F: the pipeline's own selection, and how it failed if it did.
    let mut f_out = vec![usize::MAX; n];
    let mut f_len = usize::MAX;
    let f_status = cupel_pipeline_run(
        slot.oracle.p,
        st.items,
        st.budget,
        f_out.as_mut_ptr(),
        n,
        &mut f_len,
        st.report_f,
    );
    documented(f_status);
    let dup = duplicate_keys(&st.keys);
    let mut capacity = capacity;
    const SENTINEL: usize = 0xDEAD_BEEF;
    let (status, out, message) = loop {
        let mut out = vec![SENTINEL; capacity];
        let mut len = usize::MAX;
        let status = cupel_session_run(
            slot.s,
            st.items,
            st.budget,
            if capacity == 0 {
                ptr::null_mut()
            } else {
                out.as_mut_ptr()
            },
            capacity,
            &mut len,
            report,
        );
        documented(status);
        if status == CUPEL_OK {
            assert!(len <= capacity);
            out.truncate(len);
            break (status, out, String::new());
        }
        let message = last_error();
        assert_eq!(
            seen(slot.s),
            before,
            "a failed run ({message}) changed the session"
        );
        if !report.is_null() {
            assert_eq!(cupel_report_included_count(report), 0, "report not emptied");
            assert_eq!(cupel_report_excluded_count(report), 0, "report not emptied");
        }
        bump(&STATS.session_failures, 1);
        if status != CUPEL_ERROR_BUFFER_TOO_SMALL {
            break (status, out, message);
        }
        // Too small: the needed length, nothing written; then exactly that.
        assert!(
            len > capacity && out.iter().all(|&x| x == SENTINEL),
            "needed {len} with capacity {capacity}"
        );
        assert!(
            dup.is_none(),
            "a run with duplicate keys {dup:?} got as far as the buffer"
        );
        bump(&STATS.session_too_small, 1);
        capacity = len;
    };
    if status != CUPEL_OK {
        match dup {
            Some((a, b)) => {
                bump(&STATS.session_duplicate_keys, 1);
                if f_status == CUPEL_OK {
                    assert_eq!(status, CUPEL_ERROR_INVALID_ARGUMENT, "{message}");
                }
                if status == CUPEL_ERROR_INVALID_ARGUMENT && f_status == CUPEL_OK {
                    assert!(
                        message.contains(&a.to_string()) && message.contains(&b.to_string()),
                        "duplicate keys at {a} and {b}: {message}"
                    );
                }
            }
            None => assert_eq!(
                status, f_status,
                "the session failed ({message}) where its pipeline did not, or otherwise"
            ),
        }
        return;
    }
    assert!(dup.is_none(), "a run with duplicate keys {dup:?} succeeded");
    assert_eq!(
        f_status, CUPEL_OK,
        "the session ran where its pipeline failed"
    );
    f_out.truncate(f_len);
    // The twin: only the successful runs, full buffer, always a report.
    let mut twin_out = vec![SENTINEL; n];
    let mut twin_len = usize::MAX;
    let status = cupel_session_run(
        slot.twin,
        st.items,
        st.budget,
        twin_out.as_mut_ptr(),
        n,
        &mut twin_len,
        st.report_twin,
    );
    assert_eq!(status, CUPEL_OK, "the twin failed: {}", last_error());
    assert_eq!(
        &twin_out[..twin_len],
        &out[..],
        "the twin (which saw no failed run, with a report) placed differently"
    );
    let after = seen(slot.s);
    assert_eq!(seen(slot.twin), after, "the twin's getters differ");
    let opts = options(st, st.report_twin);
    if !report.is_null() {
        assert_eq!(options(st, report), opts, "the reports differ");
        assert_eq!(
            cupel_report_excluded_count(report),
            cupel_report_excluded_count(st.report_twin)
        );
    }
    check_session_output(st, k, &out, &f_out, &after);
    bump(&STATS.session_runs, 1);
    let slot = &st.sessions[k];
    if !st
        .pipelines
        .iter()
        .any(|p| std::rc::Rc::ptr_eq(&p.oracle, &slot.oracle))
    {
        bump(&STATS.session_orphan_runs, 1);
    }
}

/// A successful session run's output `out` against the contract, with F
/// (`f`, the pipeline's selection, its report in `report_f`), the twin's
/// report (`report_twin`), the previous output and what the getters say
/// now (`after`); then remembers the run.
unsafe fn check_session_output(st: &mut State, k: usize, out: &[usize], f: &[usize], after: &Seen) {
    let n = st.tokens.len();
    let r = st.report_twin;
    let slot = &st.sessions[k];
    let w = now(st);
    let f_opts = options(st, st.report_f);
    assert_eq!(f_opts.iter().map(|x| x.0).collect::<Vec<_>>(), f);
    let target = cupel_report_effective_target_tokens(st.report_f);
    let rule = slot
        .prev
        .as_ref()
        .map(|prev| append_rule(st, &w, prev, &f_opts, slot.oracle.dedup, target));
    // Like any pipeline output: distinct indices in range, no negative
    // tokens, groups whole and together in push order.
    let mut sorted = out.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), out.len(), "duplicate indices {out:?}");
    assert!(
        out.iter().all(|&i| i < n && st.tokens[i] >= 0),
        "index out of range or negative tokens {out:?}"
    );
    check_groups(out, &st.groups, false);
    check_groups(out, &st.groups, true);
    let mut in_out = vec![false; n];
    for &i in out {
        in_out[i] = true;
    }
    let mut in_f = vec![false; n];
    for &i in f {
        in_f[i] = true;
    }
    // The report: the output as included, in its order, every other item
    // excluded once; Deferred exactly for what F takes and the session
    // does not.
    let opts = options(st, r);
    assert_eq!(
        opts.iter().map(|x| x.0).collect::<Vec<_>>(),
        out,
        "the report's included list is the output"
    );
    let mut decided = vec![0u8; n];
    for &i in out {
        decided[i] += 1;
    }
    for e in 0..cupel_report_excluded_count(r) {
        let mut d = std::mem::zeroed::<cupel_decision>();
        assert_eq!(cupel_report_excluded(r, e, &mut d), CUPEL_OK);
        let i = d.item_index;
        decided[i] += 1;
        assert_eq!(
            d.reason == CUPEL_REASON_DEFERRED as i32,
            in_f[i] && !in_out[i],
            "item {i} excluded with reason {}",
            d.reason
        );
    }
    assert!(
        decided.iter().all(|&c| c == 1),
        "every item decided once: {decided:?}"
    );
    let entries: Vec<Entry> = opts
        .iter()
        .map(|(i, opt)| Entry {
            item: *i,
            id: w.ids[*i].clone(),
            opt: opt.clone(),
            volatile: w.volatile[*i],
        })
        .collect();
    let tokens_to = |m: usize| {
        entries[..m]
            .iter()
            .fold(0i64, |a, e| a.saturating_add(e.opt.tokens))
    };
    assert_eq!(
        cupel_report_effective_target_tokens(r),
        target,
        "the session's effective target is F's"
    );
    let included_pinned = |k: usize| {
        let mut d = std::mem::zeroed::<cupel_decision>();
        assert_eq!(cupel_report_included(r, k, &mut d), CUPEL_OK);
        d.reason == CUPEL_REASON_PINNED as i32
    };
    let selected = (0..out.len())
        .filter(|&k| !included_pinned(k))
        .fold(0i64, |a, k| a.saturating_add(entries[k].opt.tokens));
    assert_eq!(cupel_report_selected_tokens(r), selected);
    // Volatile items after every other.
    let end = entries.iter().take_while(|e| !e.volatile).count();
    assert!(
        entries[end..].iter().all(|e| e.volatile),
        "volatile items not last: {out:?} (volatile {:?})",
        entries.iter().map(|e| e.volatile).collect::<Vec<_>>()
    );
    if end > 0 && end < out.len() {
        bump(&STATS.session_volatile_tails, 1);
    }
    // F's volatile items (the tail holds them, less deduplicated copies).
    let f_volatile: Vec<(usize, &Opt)> = f_opts
        .iter()
        .filter(|(i, _)| w.volatile[*i])
        .map(|(i, o)| (*i, o))
        .collect();
    let tail: Vec<(usize, &Opt)> = entries[end..].iter().map(|e| (e.item, &e.opt)).collect();
    let mut rest = f_volatile.iter();
    assert!(
        tail.iter().all(|t| rest.any(|x| x == t)),
        "the volatile tail {tail:?} is not F's volatile items {f_volatile:?} in order"
    );
    if !slot.oracle.dedup {
        assert_eq!(tail, f_volatile, "the volatile items are F's");
    }
    // Pinned items: those F has.
    let pinned_of = |list: &[usize]| {
        let mut v: Vec<usize> = list.iter().copied().filter(|&i| w.pinned[i]).collect();
        v.sort_unstable();
        v
    };
    assert_eq!(pinned_of(out), pinned_of(f), "pinned items: F's");
    // The budget, when no count slicer commits items past it and the
    // overflow strategy does not let them past.
    let bounded = !slot.oracle.has_count && !slot.oracle.proceed;
    let unpinned = unpinned_tokens(&w.pinned, entries.iter().map(|e| (e.item, &e.opt)));
    if bounded {
        assert!(
            unpinned <= target.max(0),
            "{unpinned} unpinned tokens, target {target}"
        );
    }
    // The rule taken.
    let action = after.action;
    let (stable, stable_tokens) = after.stable;
    match &slot.prev {
        None => {
            assert_eq!(
                action, CUPEL_SESSION_FIRST,
                "the first run since new or reset"
            );
            let mut want: Vec<(usize, &Opt)> = f_opts
                .iter()
                .filter(|(i, _)| !w.volatile[*i])
                .map(|(i, o)| (*i, o))
                .collect();
            want.extend(f_volatile.iter().copied());
            let got: Vec<(usize, &Opt)> = entries.iter().map(|e| (e.item, &e.opt)).collect();
            assert_eq!(got, want, "a first run is F, volatile items last");
            assert_eq!(
                (stable, stable_tokens),
                (0, 0),
                "a first run's stable prefix"
            );
            bump(&STATS.session_firsts, 1);
        }
        Some(prev) => {
            assert_ne!(action, CUPEL_SESSION_FIRST, "a later run took First");
            let rule = rule.unwrap();
            if let AppendRule::Fails(why) = &rule {
                assert_eq!(action, CUPEL_SESSION_COMPACT, "appended though {why}");
            }
            if let AppendRule::Applies { .. } = &rule {
                assert_eq!(
                    action, CUPEL_SESSION_APPEND,
                    "compacted though Append applies"
                );
            }
            let p: Vec<&Entry> = prev.out.iter().filter(|e| !e.volatile).collect();
            if action == CUPEL_SESSION_APPEND {
                bump(&STATS.session_appends, 1);
                // P, in its order, with its options.
                assert!(out.len() >= p.len(), "an append dropped items of P");
                for (a, b) in entries.iter().zip(&p) {
                    assert!(same(a, b), "an append changed P: {a:?} for {b:?}");
                }
                assert!(
                    unpinned <= target.max(0),
                    "appended {unpinned} unpinned tokens, target {target}"
                );
                if let AppendRule::Applies {
                    p: pi,
                    n: ni,
                    v: vi,
                } = &rule
                {
                    let start = pi.len();
                    assert!(out.len() >= start + ni.len() + vi.len(), "P, N and V");
                    assert_eq!(&out[..start], &pi[..], "P's items");
                    assert_eq!(&out[start..start + ni.len()], &ni[..], "N after P");
                    assert_eq!(&out[end..], &vi[..], "V last");
                    let f_opt = |i: usize| &f_opts.iter().find(|x| x.0 == i).unwrap().1;
                    for e in &entries[start..] {
                        if in_f[e.item] {
                            assert_eq!(&e.opt, f_opt(e.item), "item {} not as F has it", e.item);
                        }
                    }
                }
            } else {
                assert_eq!(action, CUPEL_SESSION_COMPACT);
                bump(&STATS.session_compactions, 1);
                // Room to spare: the non-volatile unpinned items within
                // floor((1 - slack) x T), and the volatile ones' room.
                if bounded {
                    let kept =
                        unpinned_tokens(&w.pinned, entries[..end].iter().map(|e| (e.item, &e.opt)));
                    let room = ((1.0 - after.slack) * target as f64).floor() as i64;
                    let f_vol = unpinned_tokens(&w.pinned, f_volatile.iter().copied());
                    let cap = room.min(target.saturating_sub(f_vol)).max(0);
                    assert!(
                        kept <= cap,
                        "a compaction kept {kept} tokens, slack {} of {target}",
                        after.slack
                    );
                }
                // The longest prefix of P all in the selection (same item,
                // same option), ended before a group it does not hold
                // whole, leads the output.
                let mut j = 0;
                while j < p.len() && entries[..end].iter().any(|e| same(e, p[j])) {
                    j += 1;
                }
                let whole = |j: usize| {
                    let items: Vec<usize> = entries[..end]
                        .iter()
                        .filter(|e| p[..j].iter().any(|x| same(e, x)))
                        .map(|e| e.item)
                        .collect();
                    // Each group whole, and together in P (a group is placed
                    // as one).
                    let now = |x: usize| {
                        entries[..end]
                            .iter()
                            .find(|e| same(e, p[x]))
                            .map(|e| e.item)
                    };
                    let together = |g: u64| {
                        let at: Vec<usize> = (0..j)
                            .filter(|&x| now(x).is_some_and(|i| st.groups[i] == g))
                            .collect();
                        let in_order = at.windows(2).all(|w| now(w[0]) < now(w[1]));
                        at.is_empty() || (at.last().unwrap() - at[0] + 1 == at.len() && in_order)
                    };
                    items.iter().all(|&i| {
                        st.groups[i] == 0
                            || ((0..n)
                                .filter(|&m| st.groups[m] == st.groups[i])
                                .all(|m| items.contains(&m))
                                && together(st.groups[i]))
                    })
                };
                while j > 0 && !whole(j) {
                    j -= 1;
                }
                for (a, b) in entries.iter().zip(&p[..j]) {
                    assert!(
                        same(a, b),
                        "a compaction's output does not lead with the {j} items of P it keeps: \
                         {a:?} for {b:?}"
                    );
                }
            }
            // The stable prefix: the common prefix with the previous output.
            let common = entries
                .iter()
                .zip(&prev.out)
                .take_while(|(a, b)| same(a, b))
                .count();
            assert_eq!(stable, common, "stable prefix");
        }
    }
    // The stable prefix's tokens; the breakpoints.
    assert!(stable <= out.len());
    assert_eq!(stable_tokens, tokens_to(stable), "stable prefix tokens");
    if stable > 0 {
        bump(&STATS.session_stable, 1);
    }
    let bps = &after.breakpoints;
    assert!(bps.len() <= 4);
    let pinned_end = entries.iter().take_while(|e| w.pinned[e.item]).count();
    for (x, b) in bps.iter().enumerate() {
        assert!(
            b.items >= 1 && b.items <= out.len(),
            "breakpoint {b:?} of {}",
            out.len()
        );
        assert!(x == 0 || bps[x - 1].items < b.items, "breakpoints {bps:?}");
        assert_eq!(b.tokens, tokens_to(b.items), "breakpoint {b:?}'s tokens");
        let mark = match b.items {
            i if i == end => CUPEL_MARK_END,
            i if i == stable => CUPEL_MARK_STABLE,
            i if i == pinned_end => {
                assert!(
                    b.mark == CUPEL_MARK_PINNED as i32 || b.mark == CUPEL_MARK_COMPACTION as i32,
                    "{bps:?}"
                );
                continue;
            }
            _ => CUPEL_MARK_COMPACTION,
        };
        assert_eq!(
            b.mark, mark as i32,
            "breakpoints {bps:?} (end {end}, stable {stable})"
        );
        assert!(b.items <= end.max(stable), "{bps:?}");
    }
    for at in [pinned_end, stable, end] {
        assert!(
            at == 0 || bps.iter().any(|b| b.items == at),
            "no breakpoint at {at}: {bps:?}"
        );
    }
    // The JSON report carries the same.
    let mut json_len = 0;
    let status = cupel_report_json(r, st.items, ptr::null_mut(), 0, &mut json_len);
    assert_eq!(status, CUPEL_ERROR_BUFFER_TOO_SMALL);
    let mut json = vec![0u8; json_len];
    let status = cupel_report_json(
        r,
        st.items,
        json.as_mut_ptr() as *mut c_char,
        json_len,
        &mut json_len,
    );
    assert_eq!(status, CUPEL_OK);
    let json = String::from_utf8_lossy(&json[..json_len]).into_owned();
    let name = ["first", "append", "compact"][action as usize];
    for want in [
        format!("\"action\":\"{name}\""),
        format!("\"stablePrefixItems\":{stable}"),
        format!("\"stablePrefixTokens\":{stable_tokens}"),
    ] {
        assert!(json.contains(&want), "{want} not in the report's JSON");
    }
    // Remember the run.
    let mut list = std::collections::HashMap::new();
    for id in w.ids.iter().flatten() {
        *list.entry(id.clone()).or_insert(0) += 1;
    }
    let slot = &mut st.sessions[k];
    slot.prev = Some(Prev { out: entries, list });
    slot.seen = after.clone();
}

/// The built-in o200k_base tokenizer, made once per process.
fn tokenizer() -> *const cupel_tokenizer {
    static TOKENIZER: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *TOKENIZER.get_or_init(|| {
        let mut t = ptr::null_mut();
        // SAFETY: a valid name and out-pointer.
        assert_eq!(
            unsafe { cupel_tokenizer_new(c"o200k_base".as_ptr(), &mut t) },
            CUPEL_OK
        );
        t as usize
    }) as *const cupel_tokenizer
}

/// Arbitrary sequences of C ABI calls with arbitrary values; at the end
/// every handle the program made is freed (one program at a time per
/// process: the count of live handles is global).
/// Counts trace events; checks their order (stages, then the pipeline last).
unsafe extern "C" fn count_trace(user: *mut std::ffi::c_void, e: *const cupel_trace_event) {
    let seen = &mut *(user as *mut Vec<cupel_trace_event_kind>);
    let e = &*e;
    assert!(!e.name.is_null() && !e.verbosity.is_null());
    if e.kind == cupel_trace_event_kind::CUPEL_TRACE_EVENT_EXCLUSION {
        assert!(!e.reason_name.is_null() && e.reason >= 0);
    }
    seen.push(e.kind);
}

/// Writes the pipeline as a policy document and reads it back: the copy
/// places exactly as the original, the text written again is the same;
/// with `trace`, the copy is traced and its events counted. A pipeline a
/// document cannot hold fails with CUPEL_ERROR_UNSUPPORTED, nothing else.
unsafe fn checked_policy_round_trip(
    p: *mut cupel_pipeline,
    st: &State,
    placed: &[usize],
    trace: bool,
) {
    let mut len = 0;
    let status = cupel_pipeline_to_json(p, ptr::null_mut(), 0, &mut len);
    if status == CUPEL_ERROR_UNSUPPORTED {
        return;
    }
    assert_eq!(status, CUPEL_ERROR_BUFFER_TOO_SMALL, "{}", last_error());
    let mut text = vec![0u8; len + 1];
    assert_eq!(
        cupel_pipeline_to_json(p, text.as_mut_ptr() as *mut c_char, len + 1, &mut len),
        CUPEL_OK
    );
    let mut copy = ptr::null_mut();
    let st_read = cupel_pipeline_from_json(text.as_ptr() as *const c_char, len, &mut copy);
    assert_eq!(
        st_read,
        CUPEL_OK,
        "{}: {}",
        String::from_utf8_lossy(&text[..len]),
        last_error()
    );
    let mut again = vec![0u8; len + 1];
    let mut len2 = 0;
    assert_eq!(
        cupel_pipeline_to_json(copy, again.as_mut_ptr() as *mut c_char, len + 1, &mut len2),
        CUPEL_OK
    );
    assert_eq!(&again[..len2], &text[..len], "the text written again");
    let mut events: Vec<cupel_trace_event_kind> = Vec::new();
    if trace {
        let level = (placed.len() % 3) as i32;
        let user = &mut events as *mut _ as *mut std::ffi::c_void;
        assert_eq!(
            cupel_pipeline_set_trace(copy, level, Some(count_trace), user),
            CUPEL_OK
        );
    }
    let mut out = vec![0usize; placed.len().max(1) + st.tokens.len()];
    let mut n = 0;
    let status = cupel_pipeline_run(
        copy,
        st.items,
        st.budget,
        out.as_mut_ptr(),
        out.len(),
        &mut n,
        ptr::null_mut(),
    );
    assert_eq!(status, CUPEL_OK, "the copy failed: {}", last_error());
    assert_eq!(
        &out[..n],
        placed,
        "the copy read from the policy placed differently"
    );
    if trace {
        assert!(events.len() >= 6, "{events:?}");
        assert_eq!(
            events.last(),
            Some(&cupel_trace_event_kind::CUPEL_TRACE_EVENT_PIPELINE)
        );
        bump(&STATS.traced_runs, 1);
    }
    bump(&STATS.policies_round_tripped, 1);
    cupel_pipeline_free(copy);
}

/// One byte string as a policy or budget document (or, led by byte 2, a
/// document built from the format's own keys with arbitrary values): the
/// reader gives a pipeline or CUPEL_ERROR_INVALID_ARGUMENT, never anything
/// else; a pipeline writes, reads back to the same text, and runs.
pub fn policy_document(data: &[u8]) {
    let live = cupel_live_handles();
    // SAFETY: every pointer passed is live and sized as documented.
    unsafe { policy_document_unchecked(data) }
    assert_eq!(cupel_live_handles(), live, "a handle leaked");
}

const POLICY_KEYS: [&str; 16] = [
    "scorers",
    "slicerType",
    "placerType",
    "deduplicationEnabled",
    "overflowStrategy",
    "knapsackBucketSize",
    "streamBatchSize",
    "quotas",
    "name",
    "countQuotas",
    "scarcity",
    "tokenizer",
    "sessionSlack",
    "memoryLimitBytes",
    "type",
    "weight",
];
const POLICY_WORDS: [&str; 24] = [
    "greedy",
    "knapsack",
    "stream",
    "countConstrainedKnapsack",
    "chronological",
    "uShaped",
    "none",
    "throw",
    "truncate",
    "proceed",
    "recency",
    "priority",
    "kind",
    "tag",
    "frequency",
    "reflexive",
    "scaled",
    "given",
    "decay",
    "metadataTrust",
    "metadataKey",
    "composite",
    "o200k_base",
    "Message",
];
const SCORER_KEYS: [&str; 14] = [
    "type",
    "weight",
    "kindWeights",
    "tagWeights",
    "innerScorer",
    "scorers",
    "curve",
    "halfLifeSeconds",
    "maxAgeSeconds",
    "windows",
    "referenceUnixMillis",
    "key",
    "value",
    "boost",
];

/// An arbitrary JSON value over the format's keys and words.
fn json_value(input: &mut Input, depth: u32) -> String {
    let word = |input: &mut Input| POLICY_WORDS[input.below(POLICY_WORDS.len())];
    match input.below(if depth > 3 { 6 } else { 9 }) {
        0 => "null".into(),
        1 => ["true", "false"][input.below(2)].into(),
        2 => input.i64().to_string(),
        3 => format!("{}", input.i64() as f64 / (1 + input.below(1000)) as f64),
        4 | 5 => {
            let w = word(input);
            let w = if input.one_in(4) {
                w.to_uppercase()
            } else {
                w.to_string()
            };
            serde_json_string(&w)
        }
        6 => {
            let n = input.below(4);
            let parts: Vec<String> = (0..n).map(|_| json_value(input, depth + 1)).collect();
            format!("[{}]", parts.join(","))
        }
        _ => {
            let n = input.below(6);
            let parts: Vec<String> = (0..n)
                .map(|_| {
                    let key = match input.below(3) {
                        0 => POLICY_KEYS[input.below(POLICY_KEYS.len())],
                        1 => SCORER_KEYS[input.below(SCORER_KEYS.len())],
                        _ => word(input),
                    };
                    format!(
                        "{}:{}",
                        serde_json_string(key),
                        json_value(input, depth + 1)
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
    }
}

/// A JSON string literal for a plain ASCII word (the words above).
fn serde_json_string(s: &str) -> String {
    assert!(s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    format!("\"{s}\"")
}

unsafe fn policy_document_unchecked(data: &[u8]) {
    let (mode, rest) = data
        .split_first()
        .map_or((0, &[][..]), |(m, r)| (*m % 4, r));
    let built;
    let doc: &[u8] = match mode {
        2 => {
            let mut input = Input { data: rest, pos: 0 };
            // Mostly a document with a scorers array, so the rest is reached.
            let mut v = json_value(&mut input, 0);
            if input.one_in(2) {
                let entries: Vec<String> = (0..1 + input.below(3))
                    .map(|_| {
                        let t = ["recency", "priority", "kind", "scaled", "tag", "decay"]
                            [input.below(6)];
                        format!("{{\"type\":\"{t}\",\"weight\":{}}}", 1 + input.below(5))
                    })
                    .collect();
                v = format!("{{\"scorers\":[{}],\"x\":{v}}}", entries.join(","));
            }
            built = v.into_bytes();
            &built
        }
        _ => rest,
    };
    if mode == 1 {
        let mut b = ptr::null_mut();
        let status = cupel_budget_from_json(doc.as_ptr() as *const c_char, doc.len(), &mut b);
        assert!(
            status == CUPEL_OK || status == CUPEL_ERROR_INVALID_ARGUMENT,
            "{status:?}: {}",
            last_error()
        );
        if status == CUPEL_OK {
            let mut len = 0;
            assert_eq!(
                cupel_budget_to_json(b, ptr::null_mut(), 0, &mut len),
                CUPEL_ERROR_BUFFER_TOO_SMALL
            );
            let mut text = vec![0u8; len];
            assert_eq!(
                cupel_budget_to_json(b, text.as_mut_ptr() as *mut c_char, len, &mut len),
                CUPEL_OK
            );
            let mut b2 = ptr::null_mut();
            assert_eq!(
                cupel_budget_from_json(text.as_ptr() as *const c_char, len, &mut b2),
                CUPEL_OK
            );
            cupel_budget_free(b2);
            bump(&STATS.policies_read, 1);
        } else {
            assert!(last_error().contains("json"), "{}", last_error());
        }
        cupel_budget_free(b);
        return;
    }
    let mut p = ptr::null_mut();
    let status = cupel_pipeline_from_json(doc.as_ptr() as *const c_char, doc.len(), &mut p);
    assert!(
        status == CUPEL_OK || status == CUPEL_ERROR_INVALID_ARGUMENT,
        "{status:?}: {}",
        last_error()
    );
    if status != CUPEL_OK {
        assert!(last_error().starts_with("json"), "{}", last_error());
        assert!(p.is_null());
        return;
    }
    bump(&STATS.policies_read, 1);
    let mut len = 0;
    assert_eq!(
        cupel_pipeline_to_json(p, ptr::null_mut(), 0, &mut len),
        CUPEL_ERROR_BUFFER_TOO_SMALL
    );
    let mut text = vec![0u8; len];
    assert_eq!(
        cupel_pipeline_to_json(p, text.as_mut_ptr() as *mut c_char, len, &mut len),
        CUPEL_OK
    );
    let mut copy = ptr::null_mut();
    assert_eq!(
        cupel_pipeline_from_json(text.as_ptr() as *const c_char, len, &mut copy),
        CUPEL_OK
    );
    let mut again = vec![0u8; len];
    let mut len2 = 0;
    assert_eq!(
        cupel_pipeline_to_json(copy, again.as_mut_ptr() as *mut c_char, len, &mut len2),
        CUPEL_OK
    );
    assert_eq!(again, text, "written again");
    // Both run alike on a small list.
    let mut items = ptr::null_mut();
    assert_eq!(cupel_items_new(&mut items), CUPEL_OK);
    let tokens = [40i64, 0, 75, 120, 10, 30];
    let scores = [0.9, 0.1, 0.5, 0.7, 0.3, 0.6];
    assert_eq!(
        cupel_items_push_many(items, 6, tokens.as_ptr(), scores.as_ptr(), ptr::null()),
        CUPEL_OK
    );
    for i in 0..6 {
        assert_eq!(
            cupel_items_set_timestamp(items, i, 1000 * i as i64),
            CUPEL_OK
        );
        if i % 2 == 0 {
            assert_eq!(
                cupel_items_set_content(items, i, c"same".as_ptr()),
                CUPEL_OK
            );
        }
    }
    let mut budget = ptr::null_mut();
    assert_eq!(cupel_budget_new(200, 150, &mut budget), CUPEL_OK);
    let (mut a, mut b) = ([0usize; 6], [0usize; 6]);
    let (mut na, mut nb) = (0, 0);
    let sa = cupel_pipeline_run(
        p,
        items,
        budget,
        a.as_mut_ptr(),
        6,
        &mut na,
        ptr::null_mut(),
    );
    let sb = cupel_pipeline_run(
        copy,
        items,
        budget,
        b.as_mut_ptr(),
        6,
        &mut nb,
        ptr::null_mut(),
    );
    documented(sa);
    assert_eq!(sa, sb);
    if sa == CUPEL_OK {
        assert_eq!(a[..na], b[..nb]);
        bump(&STATS.policies_round_tripped, 1);
    }
    cupel_budget_free(budget);
    cupel_items_free(items);
    cupel_pipeline_free(copy);
    cupel_pipeline_free(p);
}

pub fn abi_program(data: &[u8]) {
    tokenizer();
    let live = cupel_live_handles();
    program(data);
    assert_eq!(
        cupel_live_handles(),
        live,
        "the program left handles alive (or freed one twice)"
    );
}

fn program(data: &[u8]) {
    let mut input = Input { data, pos: 0 };
    unsafe {
        let mut st = State {
            items: ptr::null_mut(),
            tokens: vec![],
            groups: vec![],
            keys: vec![],
            volatile: vec![],
            budget: ptr::null_mut(),
            slicers: Slicers(vec![]),
            report: ptr::null_mut(),
            report_twin: ptr::null_mut(),
            report_f: ptr::null_mut(),
            pipelines: vec![],
            sessions: vec![],
            next_key: 1 << 40,
        };
        assert_eq!(cupel_items_new(&mut st.items), CUPEL_OK);
        assert_eq!(cupel_report_new(&mut st.report), CUPEL_OK);
        assert_eq!(cupel_report_new(&mut st.report_twin), CUPEL_OK);
        assert_eq!(cupel_report_new(&mut st.report_f), CUPEL_OK);
        let (max, target) = (input.i64(), input.i64());
        if cupel_budget_new(max, target, &mut st.budget) != CUPEL_OK {
            assert!(st.budget.is_null());
            assert!(last_error().contains("tokens"), "{}", last_error());
            assert_eq!(cupel_budget_new(1000, 800, &mut st.budget), CUPEL_OK);
        }
        let mut g = ptr::null_mut();
        assert_eq!(cupel_slicer_new_greedy(&mut g), CUPEL_OK);
        st.slicers.0.push((g, false));
        let mut stream: *mut cupel_stream = ptr::null_mut();
        let mut stream_tokens: Vec<i64> = vec![];
        let mut stream_target = 0i64;
        let mut stream_finished = false;

        for _ in 0..64 {
            if input.done() {
                break;
            }
            let pick =
                |input: &mut Input, st: &State| st.slicers.0[input.below(st.slicers.0.len())];
            match input.u8() % 24 {
                0 | 13 if st.tokens.len() < MAX_ITEMS => {
                    let (t, s, k) = (input.tokens(), input.f64(), input.kind());
                    let status = cupel_items_push(st.items, t, s, kind_ptr(k));
                    documented(status);
                    if status == CUPEL_OK {
                        st.tokens.push(t);
                        st.groups.push(0);
                        st.keys.push(0);
                        st.volatile.push(false);
                        bump(&STATS.items_pushed, 1);
                    }
                    assert_eq!(cupel_items_len(st.items), st.tokens.len());
                }
                1 | 14 if st.tokens.len() < MAX_ITEMS => {
                    let n = input.below(40);
                    let t: Vec<i64> = (0..n).map(|_| input.tokens()).collect();
                    let s: Vec<f64> = (0..n).map(|_| input.f64()).collect();
                    let with_kinds = input.one_in(2);
                    let k: Vec<*const c_char> = (0..n).map(|_| kind_ptr(input.kind())).collect();
                    let status = cupel_items_push_many(
                        st.items,
                        n,
                        t.as_ptr(),
                        s.as_ptr(),
                        if with_kinds { k.as_ptr() } else { ptr::null() },
                    );
                    documented(status);
                    if status == CUPEL_OK {
                        st.tokens.extend_from_slice(&t);
                        st.groups.resize(st.tokens.len(), 0);
                        st.keys.resize(st.tokens.len(), 0);
                        st.volatile.resize(st.tokens.len(), false);
                        bump(&STATS.items_pushed, n);
                    }
                    assert_eq!(
                        cupel_items_len(st.items),
                        st.tokens.len(),
                        "push_many not atomic"
                    );
                }
                2 => {
                    let mut s = ptr::null_mut();
                    let bucket = input.i64();
                    let status = cupel_slicer_new_knapsack(bucket, &mut s);
                    documented(status);
                    if status == CUPEL_OK {
                        let limit = input.below(FUZZ_MEMORY_LIMIT);
                        assert_eq!(cupel_slicer_set_memory_limit(s, limit), CUPEL_OK);
                        assert_eq!(cupel_slicer_memory_limit(s), limit);
                        st.slicers.0.push((s, false));
                    } else {
                        assert!(s.is_null() && bucket <= 0);
                    }
                }
                3 => {
                    let (inner, count) = pick(&mut input, &st);
                    let kinds: Vec<Option<&CStr>> =
                        (0..input.below(5)).map(|_| input.kind()).collect();
                    let q: Vec<cupel_quota> = kinds
                        .iter()
                        .map(|&k| cupel_quota {
                            kind: kind_ptr(k),
                            require_percent: input.percent(),
                            cap_percent: input.percent(),
                        })
                        .collect();
                    let mut s = ptr::null_mut();
                    let status = cupel_slicer_new_quota(inner, q.as_ptr(), q.len(), &mut s);
                    documented(status);
                    if status == CUPEL_OK {
                        st.slicers.0.push((s, count));
                    }
                }
                4 | 5 => {
                    let knapsack = input.one_in(2);
                    let kinds: Vec<Option<&CStr>> =
                        (0..input.below(4)).map(|_| input.kind()).collect();
                    let e: Vec<cupel_count_quota> = kinds
                        .iter()
                        .map(|&k| cupel_count_quota {
                            kind: kind_ptr(k),
                            require_count: input.below(6) as u32,
                            cap_count: input.below(8) as u32,
                        })
                        .collect();
                    let scarcity = if input.one_in(8) {
                        input.i64() as i32
                    } else {
                        input.below(2) as i32
                    };
                    let mut s = ptr::null_mut();
                    let status = if knapsack {
                        let status = cupel_slicer_new_count_constrained_knapsack(
                            1 + input.below(200) as i64,
                            e.as_ptr(),
                            e.len(),
                            scarcity,
                            &mut s,
                        );
                        if status == CUPEL_OK {
                            assert_eq!(
                                cupel_slicer_set_memory_limit(s, FUZZ_MEMORY_LIMIT),
                                CUPEL_OK
                            );
                        }
                        status
                    } else {
                        let (inner, _) = pick(&mut input, &st);
                        cupel_slicer_new_count_quota(inner, e.as_ptr(), e.len(), scarcity, &mut s)
                    };
                    documented(status);
                    if status == CUPEL_OK {
                        st.slicers.0.push((s, true));
                        bump(&STATS.count_slicers, 1);
                    } else {
                        assert!(s.is_null());
                    }
                }
                6 => {
                    let (mut m0, mut t0) = (0, 0);
                    let before = cupel_budget_effective(st.budget, 0, &mut m0, &mut t0);
                    let status = match input.u8() % 3 {
                        0 => cupel_budget_set_output_reserve(st.budget, input.i64()),
                        1 => cupel_budget_set_safety_margin(st.budget, input.percent()),
                        _ => cupel_budget_reserve(st.budget, kind_ptr(input.kind()), input.i64()),
                    };
                    documented(status);
                    if status != CUPEL_OK {
                        let (mut m1, mut t1) = (0, 0);
                        let after = cupel_budget_effective(st.budget, 0, &mut m1, &mut t1);
                        assert_eq!(
                            (before, m0, t0),
                            (after, m1, t1),
                            "failed call changed the budget"
                        );
                    }
                }
                7 | 8 | 15 => {
                    let (s, count) = pick(&mut input, &st);
                    let pinned = if input.one_in(4) { input.i64() } else { 0 };
                    let capacity = if input.one_in(4) {
                        input.below(4)
                    } else {
                        st.tokens.len()
                    };
                    checked_slice(&st, s, count, pinned, capacity);
                }
                9 => {
                    let (s, _) = pick(&mut input, &st);
                    let n = st.tokens.len();
                    let mut out = vec![0usize; n];
                    let mut len = 0;
                    let status = cupel_marginal_items(
                        s,
                        st.items,
                        st.budget,
                        0,
                        input.i64(),
                        if n == 0 {
                            ptr::null_mut()
                        } else {
                            out.as_mut_ptr()
                        },
                        n,
                        &mut len,
                    );
                    documented(status);
                    if status == CUPEL_OK {
                        let mut x = out[..len].to_vec();
                        x.sort_unstable();
                        x.dedup();
                        assert_eq!(x.len(), len);
                        assert!(x.iter().all(|&i| i < n));
                    }
                }
                10 => {
                    let (s, _) = pick(&mut input, &st);
                    let mut tokens = -7;
                    let target_index = input.below(st.tokens.len() + 2);
                    let ceiling = input.i64();
                    let status =
                        cupel_find_min_budget(s, st.items, 0, target_index, ceiling, &mut tokens);
                    documented(status);
                    if status == CUPEL_OK {
                        // -1: not selected even at the ceiling.
                        assert!(
                            tokens == -1 || (0..=ceiling.max(0)).contains(&tokens),
                            "{tokens} vs ceiling {ceiling}"
                        );
                    } else {
                        assert_eq!(tokens, -7, "output written on failure");
                    }
                }
                11 => {
                    if stream.is_null() || input.one_in(8) {
                        cupel_stream_free(stream);
                        stream = ptr::null_mut();
                        stream_target = input.i64();
                        let status = cupel_stream_new(stream_target, input.below(5), &mut stream);
                        documented(status);
                        stream_tokens.clear();
                        stream_finished = false;
                        continue;
                    }
                    if !input.one_in(4) {
                        let (t, s) = (input.tokens(), input.f64());
                        let mut full = false;
                        let status = cupel_stream_push(stream, t, s, &mut full);
                        documented(status);
                        if status == CUPEL_OK {
                            assert!(!stream_finished, "push accepted after finish");
                            stream_tokens.push(t);
                        }
                    } else {
                        let n = stream_tokens.len();
                        let mut out = vec![0usize; n];
                        let mut len = 0;
                        let status = cupel_stream_finish(
                            stream,
                            if n == 0 {
                                ptr::null_mut()
                            } else {
                                out.as_mut_ptr()
                            },
                            n,
                            &mut len,
                        );
                        assert_eq!(status, CUPEL_OK, "{}", last_error());
                        stream_finished = true;
                        bump(&STATS.stream_finishes, 1);
                        let taken = &out[..len];
                        let mut x = taken.to_vec();
                        x.sort_unstable();
                        x.dedup();
                        assert_eq!(x.len(), len);
                        assert!(x.iter().all(|&i| i < n));
                        let sum = taken
                            .iter()
                            .fold(0i64, |a, &i| a.saturating_add(stream_tokens[i]));
                        assert!(
                            sum <= stream_target.max(0),
                            "stream took {sum} of {stream_target}"
                        );
                    }
                }
                12 if input.one_in(4) => {
                    cupel_items_clear(st.items);
                    st.tokens.clear();
                    st.groups.clear();
                    st.keys.clear();
                    st.volatile.clear();
                }
                16 | 17 => fuzz_attribute(&mut input, &mut st),
                18 => fuzz_pipeline(&mut input, &mut st, false),
                20..=23 => fuzz_session(&mut input, &mut st),
                19 => {
                    let s = fuzz_scorer(&mut input, 0);
                    if !s.is_null() {
                        let n = st.tokens.len();
                        let mut out = vec![0.0; n];
                        let mut len = 0;
                        let status = cupel_scorer_score(s, st.items, out.as_mut_ptr(), n, &mut len);
                        assert_eq!(status, CUPEL_OK, "{}", last_error());
                        assert_eq!(len, n);
                        cupel_scorer_free(s);
                    }
                }
                _ => {}
            }
        }
        cupel_stream_free(stream);
    }
}

/// A small well-formed case of the differential tests' shape.
struct Case {
    tokens: Vec<i64>,
    scores: Vec<f64>,
    kinds: Vec<&'static str>,
    target: i64,
}

const KINDS: [&str; 4] = ["Message", "Document", "ToolOutput", "Memory"];

fn case(input: &mut Input) -> Case {
    let n = input.below(40);
    let mut c = Case {
        tokens: vec![],
        scores: vec![],
        kinds: vec![],
        target: input.below(3000) as i64,
    };
    for _ in 0..n {
        c.tokens.push(if input.one_in(10) {
            0
        } else {
            1 + input.below(400) as i64
        });
        c.scores.push(input.below(101) as f64 / 100.0);
        c.kinds.push(KINDS[input.below(KINDS.len())]);
    }
    c
}

/// The case's items repeated, each copy's tokens and scores shifted, to at
/// least 16,384 items (GreedySlice splits inputs that large at a sampled
/// density first: src/slicer/greedy.rs), with a target of up to the copies'
/// count times the case's. Taken one time in eight, from a non-zero byte.
fn tiled(c: Case, input: &mut Input) -> Case {
    if c.tokens.is_empty() || input.u8() % 8 != 7 {
        return c;
    }
    let n = c.tokens.len();
    let copies = 16_384usize.div_ceil(n) + input.below(3);
    let mut big = Case {
        tokens: Vec::with_capacity(n * copies),
        scores: Vec::with_capacity(n * copies),
        kinds: Vec::with_capacity(n * copies),
        target: c.target * (1 + input.below(copies)) as i64,
    };
    bump(&STATS.large_compared, 1);
    for k in 0..copies {
        for i in 0..n {
            let t = c.tokens[i];
            big.tokens.push(if t == 0 { 0 } else { t + (k % 5) as i64 });
            big.scores
                .push(((c.scores[i] * 100.0) as usize + 37 * k) as f64 % 101.0 / 100.0);
            big.kinds.push(c.kinds[(i + k) % n]);
        }
    }
    big
}

unsafe fn ours(c: &Case, slicer: *mut cupel_slicer) -> Vec<usize> {
    let names: Vec<CString> = c.kinds.iter().map(|k| CString::new(*k).unwrap()).collect();
    let ptrs: Vec<*const c_char> = names.iter().map(|k| k.as_ptr()).collect();
    let mut items = ptr::null_mut();
    let mut budget = ptr::null_mut();
    assert_eq!(cupel_items_new(&mut items), CUPEL_OK);
    assert_eq!(
        cupel_items_push_many(
            items,
            c.tokens.len(),
            c.tokens.as_ptr(),
            c.scores.as_ptr(),
            ptrs.as_ptr()
        ),
        CUPEL_OK
    );
    assert_eq!(cupel_budget_new(c.target, c.target, &mut budget), CUPEL_OK);
    let mut out = vec![0usize; c.tokens.len()];
    let mut len = 0;
    let status = cupel_slice(
        slicer,
        items,
        budget,
        0,
        out.as_mut_ptr(),
        out.len(),
        &mut len,
        ptr::null_mut(),
    );
    assert_eq!(status, CUPEL_OK, "{}", last_error());
    cupel_items_free(items);
    cupel_budget_free(budget);
    cupel_slicer_free(slicer);
    out.truncate(len);
    out
}

fn theirs(c: &Case, slicer: &dyn r::Slicer) -> Vec<usize> {
    reference_selection(&c.tokens, &c.scores, &c.kinds, c.target, slicer)
}

/// What the cupel 1.2.0 crate selects (item indices, its order) from items
/// given in push order, after the Sort stage (score descending, stable),
/// with max = target = `target`. Shared with tests/differential.rs.
/// KNAPSACK-SLICE as spec 001 writes it (`cupel::slicer::knapsack::reference`)
/// over the Sort stage's order of the case's items.
pub fn spec_knapsack(tokens: &[i64], scores: &[f64], target: i64, bucket: i64) -> Vec<usize> {
    let mut items = cupel::Items::new();
    for i in 0..tokens.len() {
        let item = cupel::NewItem {
            tokens: tokens[i],
            score: scores[i],
            kind: None,
        };
        items.push(item).unwrap();
    }
    let cands = cupel::sort::sort_stage(&items.view());
    cupel::slicer::knapsack::reference::knapsack(tokens, scores, &cands, target, bucket)
        .into_iter()
        .map(|i| i as usize)
        .collect()
}

pub fn reference_selection(
    tokens: &[i64],
    scores: &[f64],
    kinds: &[impl AsRef<str>],
    target: i64,
    slicer: &dyn r::Slicer,
) -> Vec<usize> {
    let mut scored: Vec<r::ScoredItem> = (0..tokens.len())
        .map(|i| r::ScoredItem {
            item: r::ContextItemBuilder::new(i.to_string(), tokens[i])
                .kind(r::ContextKind::new(kinds[i].as_ref()).unwrap())
                .build()
                .unwrap(),
            score: scores[i],
        })
        .collect();
    scored.sort_by(|a, b| b.score.partial_cmp(&a.score).unwrap());
    let budget = r::ContextBudget::new(target, target, 0, Default::default(), 0.0).unwrap();
    slicer
        .slice(&scored, &budget)
        .unwrap()
        .iter()
        .map(|it| it.content().parse().unwrap())
        .collect()
}

fn as_set(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v
}

/// libcupel against the cupel 1.2.0 crate on a small well-formed case.
/// A small pipeline case from the input: every item field, a scorer,
/// Greedy or Knapsack, a placer, deduplication, an overflow strategy.
fn pipeline_case(input: &mut Input) -> pipeline_ref::Case {
    use pipeline_ref::{Case, Item, ScorerSpec, SlicerSpec, REFERENCE_MS};
    const KINDS: [&str; 5] = [
        "Message",
        "Document",
        "ToolOutput",
        "Memory",
        "SystemPrompt",
    ];
    const TAGS: [&str; 4] = ["a", "A", "b", "c"];
    let dedup = input.one_in(2);
    let n = input.below(12);
    let items = (0..n)
        .map(|i| Item {
            // Repeated contents only where deduplication runs (departure 1).
            content: if dedup {
                format!("c{}", input.below(4))
            } else {
                format!("u{i}")
            },
            tokens: input.below(300) as i64 - if input.one_in(10) { 350 } else { 0 },
            kind: KINDS[input.below(5)].to_string(),
            timestamp: input
                .one_in(4)
                .then(|| REFERENCE_MS - input.below(100_000) as i64 * 1000),
            priority: input.one_in(2).then(|| input.below(5) as i64),
            pinned: input.one_in(12),
            hint: input.one_in(2).then(|| input.below(15) as f64 / 10.0 - 0.2),
            tags: (0..input.below(3))
                .map(|_| TAGS[input.below(4)].to_string())
                .collect(),
            group: 0,
            metadata: if input.one_in(2) {
                vec![(
                    "cupel:trust".to_string(),
                    ["0.3", "x", "2"][input.below(3)].to_string(),
                )]
            } else {
                vec![]
            },
        })
        .collect();
    let simple = |input: &mut Input| match input.below(6) {
        0 => ScorerSpec::Recency,
        1 => ScorerSpec::Priority,
        2 => ScorerSpec::Kind(None),
        3 => ScorerSpec::Frequency,
        4 => ScorerSpec::Reflexive,
        _ => ScorerSpec::Trust(0.5),
    };
    let scorer = match input.below(4) {
        0 => ScorerSpec::Composite(vec![(simple(input), 1.0), (simple(input), 2.0)]),
        1 => ScorerSpec::Scaled(Box::new(simple(input))),
        _ => simple(input),
    };
    let max = 100 + input.below(2000) as i64;
    Case {
        items,
        scorer,
        slicer: if input.one_in(2) {
            SlicerSpec::Greedy
        } else {
            SlicerSpec::Knapsack([1, 10, 100][input.below(3)])
        },
        u_shaped: input.one_in(2),
        dedup,
        overflow: input.below(3) as i32,
        max,
        target: input.below(max as usize + 1) as i64,
        reserve: if input.one_in(3) {
            input.below(50) as i64
        } else {
            0
        },
    }
}

pub fn versus_reference(data: &[u8]) {
    bump(&STATS.compared, 1);
    let mut input = Input { data, pos: 0 };
    if input.one_in(3) {
        let c = pipeline_case(&mut input);
        if let Err(e) = pipeline_ref::compare(&c) {
            panic!("pipeline differs from the crate: {e}\n{c:#?}");
        }
        return;
    }
    let c = case(&mut input);
    let bucket = [1i64, 7, 100][input.below(3)];
    unsafe {
        let mut s = ptr::null_mut();
        match input.u8() % 4 {
            0 => {
                let c = tiled(c, &mut input);
                assert_eq!(cupel_slicer_new_greedy(&mut s), CUPEL_OK);
                assert_eq!(ours(&c, s), theirs(&c, &r::GreedySlice), "greedy");
            }
            1 => {
                assert_eq!(cupel_slicer_new_knapsack(bucket, &mut s), CUPEL_OK);
                let want = theirs(&c, &r::KnapsackSlice::new(bucket).unwrap());
                let got = ours(&c, s);
                assert_eq!(got, want, "knapsack bucket {bucket}");
                let spec = spec_knapsack(&c.tokens, &c.scores, c.target, bucket);
                assert_eq!(got, spec, "knapsack bucket {bucket} vs spec 001's DP");
            }
            2 => {
                let c = tiled(c, &mut input);
                // QuotaSlice over greedy, whole percentages summing to <= 100.
                let mut left = 100;
                let mut ours_q = vec![];
                let mut ref_q = vec![];
                let names: Vec<CString> = KINDS.iter().map(|k| CString::new(*k).unwrap()).collect();
                for (i, k) in KINDS.iter().enumerate().take(input.below(4)) {
                    let require = input.below(left / 2 + 1);
                    left -= require;
                    let cap = require + input.below(100 - require + 1);
                    ours_q.push(cupel_quota {
                        kind: names[i].as_ptr(),
                        require_percent: require as f64,
                        cap_percent: cap as f64,
                    });
                    ref_q.push(
                        r::QuotaEntry::new(
                            r::ContextKind::new(*k).unwrap(),
                            require as f64,
                            cap as f64,
                        )
                        .unwrap(),
                    );
                }
                let mut g = ptr::null_mut();
                assert_eq!(cupel_slicer_new_greedy(&mut g), CUPEL_OK);
                assert_eq!(
                    cupel_slicer_new_quota(g, ours_q.as_ptr(), ours_q.len(), &mut s),
                    CUPEL_OK
                );
                cupel_slicer_free(g);
                let reference = r::QuotaSlice::new(ref_q, Box::new(r::GreedySlice)).unwrap();
                assert_eq!(as_set(ours(&c, s)), as_set(theirs(&c, &reference)), "quota");
            }
            _ => {
                // CountQuotaSlice over greedy or CountConstrainedKnapsackSlice.
                let names: Vec<CString> = KINDS.iter().map(|k| CString::new(*k).unwrap()).collect();
                let mut ours_e = vec![];
                let mut ref_e = vec![];
                for (i, k) in KINDS.iter().enumerate().take(input.below(4)) {
                    let require = input.below(4) as u32;
                    let cap = (require + input.below(4) as u32).max(1);
                    ours_e.push(cupel_count_quota {
                        kind: names[i].as_ptr(),
                        require_count: require,
                        cap_count: cap,
                    });
                    ref_e.push(
                        r::CountQuotaEntry::new(
                            r::ContextKind::new(*k).unwrap(),
                            require as usize,
                            cap as usize,
                        )
                        .unwrap(),
                    );
                }
                if input.one_in(2) {
                    let mut g = ptr::null_mut();
                    assert_eq!(cupel_slicer_new_greedy(&mut g), CUPEL_OK);
                    assert_eq!(
                        cupel_slicer_new_count_quota(g, ours_e.as_ptr(), ours_e.len(), 0, &mut s),
                        CUPEL_OK
                    );
                    cupel_slicer_free(g);
                    let reference = r::CountQuotaSlice::new(
                        ref_e,
                        Box::new(r::GreedySlice),
                        r::ScarcityBehavior::Degrade,
                    )
                    .unwrap();
                    assert_eq!(
                        as_set(ours(&c, s)),
                        as_set(theirs(&c, &reference)),
                        "count quota"
                    );
                } else {
                    assert_eq!(
                        cupel_slicer_new_count_constrained_knapsack(
                            bucket,
                            ours_e.as_ptr(),
                            ours_e.len(),
                            0,
                            &mut s
                        ),
                        CUPEL_OK
                    );
                    let reference = r::CountConstrainedKnapsackSlice::new(
                        ref_e,
                        r::KnapsackSlice::new(bucket).unwrap(),
                        r::ScarcityBehavior::Degrade,
                    )
                    .unwrap();
                    assert_eq!(
                        as_set(ours(&c, s)),
                        as_set(theirs(&c, &reference)),
                        "count knapsack"
                    );
                }
            }
        }
    }
}

/// The tokenizers, through the C ABI, on arbitrary bytes: invalid UTF-8
/// is refused at the offset Rust finds; valid text counts as tiktoken-rs
/// counts it (both built-in encodings); truncation keeps its promises
/// (at most `max` tokens, character boundaries, the head before the tail,
/// the count of what is kept) and, on short texts, equals its definition
/// by brute force; an item pushed from the text has that count.
pub fn tokenize(data: &[u8]) {
    use std::sync::OnceLock;
    struct Oracle {
        ours: *mut cupel_tokenizer,
        theirs: tiktoken_rs::CoreBPE,
    }
    // SAFETY (of the two impls): the tokenizer is immutable after creation
    // and documented as shareable across threads.
    unsafe impl Send for Oracle {}
    unsafe impl Sync for Oracle {}
    static ORACLES: OnceLock<[Oracle; 2]> = OnceLock::new();
    let oracles = ORACLES.get_or_init(|| {
        let new = |name: &CStr| {
            let mut t = ptr::null_mut();
            assert_eq!(
                unsafe { cupel_tokenizer_new(name.as_ptr(), &mut t) },
                CUPEL_OK
            );
            t
        };
        [
            Oracle {
                ours: new(c"o200k_base"),
                theirs: tiktoken_rs::o200k_base().unwrap(),
            },
            Oracle {
                ours: new(c"cl100k_base"),
                theirs: tiktoken_rs::cl100k_base().unwrap(),
            },
        ]
    });
    // The first byte picks a truncation budget; the rest is the text.
    let (max, bytes) = match data.split_first() {
        Some((&m, rest)) => (m as i64 % 40, rest),
        None => (0, data),
    };
    for o in oracles {
        let mut n = -1i64;
        let status =
            unsafe { cupel_tokenizer_count(o.ours, bytes.as_ptr().cast(), bytes.len(), &mut n) };
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                assert_eq!(status, CUPEL_ERROR_INVALID_ARGUMENT);
                assert!(
                    last_error().contains(&format!("offset {}", e.valid_up_to())),
                    "{}",
                    last_error()
                );
                assert_eq!(n, -1, "a failed count wrote");
                continue;
            }
        };
        assert_eq!(status, CUPEL_OK, "{}", last_error());
        let want = o.theirs.encode_ordinary(text);
        assert_eq!(n as usize, want.len(), "count of {text:?}");
        let count = |s: &str| o.theirs.encode_ordinary(s).len();
        for keep in [CUPEL_KEEP_HEAD, CUPEL_KEEP_TAIL, CUPEL_KEEP_BOTH_ENDS] {
            let (mut head, mut tail, mut kept) = (0usize, 0usize, 0i64);
            let status = unsafe {
                cupel_tokenizer_truncate(
                    o.ours,
                    text.as_ptr().cast(),
                    text.len(),
                    max,
                    keep as i32,
                    &mut head,
                    &mut tail,
                    &mut kept,
                )
            };
            assert_eq!(status, CUPEL_OK, "{}", last_error());
            assert!(
                head <= tail && tail <= text.len(),
                "{head}..{tail} of {}",
                text.len()
            );
            assert!(text.is_char_boundary(head) && text.is_char_boundary(tail));
            assert!(kept <= max || kept as usize == want.len() && want.len() as i64 <= max);
            let tail_count = if tail < text.len() {
                count(&text[tail..])
            } else {
                0
            };
            assert_eq!(
                kept as usize,
                count(&text[..head]) + tail_count,
                "{keep:?} {max} of {text:?}"
            );
            if want.len() as i64 <= max {
                assert_eq!((head, tail), (text.len(), text.len()));
            }
            if text.len() <= 64 {
                let expected = brute_force_cut(&o.theirs, text, max as usize, keep);
                assert_eq!(
                    (head, tail, kept as usize),
                    expected,
                    "{keep:?} {max} of {text:?}"
                );
            }
        }
        // An item from the text: its tokens are the count.
        if !text.is_empty() {
            let mut items = ptr::null_mut();
            assert_eq!(unsafe { cupel_items_new(&mut items) }, CUPEL_OK);
            let status = unsafe {
                cupel_items_push_text(
                    items,
                    o.ours,
                    text.as_ptr().cast(),
                    text.len(),
                    0.5,
                    ptr::null(),
                )
            };
            assert_eq!(status, CUPEL_OK, "{}", last_error());
            let mut t = 0;
            assert_eq!(unsafe { cupel_items_tokens(items, 0, &mut t) }, CUPEL_OK);
            assert_eq!(t as usize, want.len());
            unsafe { cupel_items_free(items) };
        }
    }
}

/// Arbitrary bytes as UTF-8 (lossily): each hand-written pre-tokenizer
/// (o200k_base, cl100k_base, Llama 3), and the general engine on the same
/// patterns, gives exactly fancy-regex's pieces (the engine tiktoken runs).
pub fn pretok(data: &[u8]) {
    use cupel::text::pretok::Pattern;
    use std::sync::OnceLock;
    struct Case {
        hand: Pattern,
        general: Pattern,
        oracle: fancy_regex::Regex,
    }
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    let cases = CASES.get_or_init(|| {
        [Pattern::O200K, Pattern::CL100K, Pattern::LLAMA3]
            .into_iter()
            .map(|src| Case {
                hand: Pattern::compile(src).unwrap(),
                general: Pattern::compile_general(src).unwrap(),
                oracle: fancy_regex::Regex::new(src).unwrap(),
            })
            .collect()
    });
    let text = String::from_utf8_lossy(data);
    let text: &str = &text;
    for case in cases {
        assert!(case.hand.is_hand_written());
        let mut expected = vec![];
        for m in case.oracle.find_iter(text) {
            // fancy-regex's backtracking limit: no oracle for this input.
            let Ok(m) = m else { return };
            if m.start() < m.end() {
                expected.push((m.start(), m.end()));
            }
        }
        assert_eq!(case.hand.pieces(text), expected, "hand-written on {text:?}");
        assert_eq!(case.general.pieces(text), expected, "general on {text:?}");
    }
}

/// `cupel_tokenizer_truncate`'s rules by brute force: every token boundary
/// of the whole text that is a character boundary, every prefix and suffix
/// counted in full.
pub fn brute_force_cut(
    theirs: &tiktoken_rs::CoreBPE,
    text: &str,
    max: usize,
    keep: cupel_keep,
) -> (usize, usize, usize) {
    let count = |s: &str| theirs.encode_ordinary(s).len();
    let len = text.len();
    let total = count(text);
    if total <= max {
        return (len, len, total);
    }
    if max == 0 {
        return (0, len, 0);
    }
    let mut cands = vec![0];
    let mut at = 0;
    for t in theirs.encode_ordinary(text) {
        at += theirs.decode_bytes(&[t]).unwrap().len();
        cands.push(at);
    }
    cands.retain(|&b| text.is_char_boundary(b));
    let head = |max: usize| {
        cands
            .iter()
            .rev()
            .map(|&b| (b, count(&text[..b])))
            .find(|&(_, c)| c <= max)
            .unwrap_or((0, 0))
    };
    let tail = |max: usize, from: usize| {
        if max == 0 {
            return (len, 0);
        }
        cands
            .iter()
            .filter(|&&b| b >= from)
            .map(|&b| (b, count(&text[b..])))
            .find(|&(_, c)| c <= max)
            .unwrap_or((len, 0))
    };
    match keep {
        CUPEL_KEEP_HEAD => {
            let (h, c) = head(max);
            (h, len, c)
        }
        CUPEL_KEEP_TAIL => {
            let (t, c) = tail(max, 0);
            (0, t, c)
        }
        CUPEL_KEEP_BOTH_ENDS => {
            let (h, hc) = head(max.div_ceil(2));
            let (t, tc) = tail(max - hc, h);
            (h, t, hc + tc)
        }
    }
}
