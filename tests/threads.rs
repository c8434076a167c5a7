//! The threading promise (docs/c-api.md, Threads): many threads slicing at once on the same
//! const handles (each with its own report), every slicer at once, get the
//! single-threaded results; budget simulation too; and many sessions at
//! once (one a thread, all from one shared pipeline) run their
//! conversations as they do one at a time.

mod common;

use common::Rng;
use cupel::ffi::*;
use std::ffi::CString;
use std::ptr;

/// Shared const handles; the ABI allows concurrent use of const handles.
#[derive(Clone, Copy)]
struct Shared {
    slicer: *const cupel_slicer,
    items: *const cupel_items,
    budget: *const cupel_budget,
}
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

unsafe fn slice(h: Shared, n_items: usize) -> (Vec<usize>, usize, usize) {
    let mut report = ptr::null_mut();
    assert_eq!(cupel_report_new(&mut report), CUPEL_OK);
    let mut out = vec![0usize; n_items];
    let mut n = 0;
    assert_eq!(
        cupel_slice(
            h.slicer,
            h.items,
            h.budget,
            0,
            out.as_mut_ptr(),
            n_items,
            &mut n,
            report
        ),
        CUPEL_OK
    );
    out.truncate(n);
    let counts = (
        cupel_report_shortfall_count(report),
        cupel_report_cap_excluded_count(report),
    );
    cupel_report_free(report);
    (out, counts.0, counts.1)
}

/// Budget simulation on shared handles: marginal items for 500 tokens of
/// slack, and the budget item 3 needs.
unsafe fn simulate(h: Shared, n_items: usize) -> (Vec<usize>, i64) {
    let mut out = vec![0usize; n_items];
    let mut n = 0;
    let st = cupel_marginal_items(
        h.slicer,
        h.items,
        h.budget,
        0,
        500,
        out.as_mut_ptr(),
        n_items,
        &mut n,
    );
    assert_eq!(st, CUPEL_OK);
    out.truncate(n);
    let mut min = 0;
    assert_eq!(
        cupel_find_min_budget(h.slicer, h.items, 0, 3, 1 << 20, &mut min),
        CUPEL_OK
    );
    (out, min)
}

#[test]
fn twelve_threads_slice_shared_handles_like_one() {
    unsafe {
        let kinds: Vec<CString> = ["Message", "Document", "ToolOutput", "Memory"]
            .iter()
            .map(|k| CString::new(*k).unwrap())
            .collect();
        let mut items = ptr::null_mut();
        assert_eq!(cupel_items_new(&mut items), CUPEL_OK);
        let mut rng = Rng(99);
        let n_items = 2000;
        for _ in 0..n_items {
            let k = &kinds[rng.below(4) as usize];
            let status = cupel_items_push(
                items,
                rng.below(400) as i64,
                rng.below(1000) as f64 / 1000.0,
                k.as_ptr(),
            );
            assert_eq!(status, CUPEL_OK);
        }
        let mut budget = ptr::null_mut();
        assert_eq!(cupel_budget_new(20000, 16000, &mut budget), CUPEL_OK);

        let mut greedy = ptr::null_mut();
        let mut knapsack = ptr::null_mut();
        let mut quota = ptr::null_mut();
        let mut count = ptr::null_mut();
        let mut cck = ptr::null_mut();
        let quotas = [cupel_quota {
            kind: kinds[1].as_ptr(),
            require_percent: 20.0,
            cap_percent: 50.0,
        }];
        let entries = [cupel_count_quota {
            kind: kinds[2].as_ptr(),
            require_count: 5,
            cap_count: 20,
        }];
        assert_eq!(cupel_slicer_new_greedy(&mut greedy), CUPEL_OK);
        assert_eq!(cupel_slicer_new_knapsack(10, &mut knapsack), CUPEL_OK);
        assert_eq!(
            cupel_slicer_new_quota(knapsack, quotas.as_ptr(), 1, &mut quota),
            CUPEL_OK
        );
        assert_eq!(
            cupel_slicer_new_count_quota(greedy, entries.as_ptr(), 1, 0, &mut count),
            CUPEL_OK
        );
        assert_eq!(
            cupel_slicer_new_count_constrained_knapsack(10, entries.as_ptr(), 1, 0, &mut cck),
            CUPEL_OK
        );

        // Every slicer at once: each thread walks all of them in its own
        // order, so different slicers (and knapsack scratch sizes) overlap.
        let all: Vec<Shared> = [greedy, knapsack, quota, count, cck]
            .into_iter()
            .map(|slicer| Shared {
                slicer,
                items,
                budget,
            })
            .collect();
        let want: Vec<_> = all.iter().map(|&h| slice(h, n_items)).collect();
        assert!(want.iter().all(|w| !w.0.is_empty()));
        let want_sim: Vec<_> = all[..2].iter().map(|&h| simulate(h, n_items)).collect();
        let threads: Vec<_> = (0..12)
            .map(|t| {
                let all = all.clone();
                std::thread::spawn(move || {
                    let mut got = vec![];
                    for round in 0..10 {
                        let i = (t * 7 + round * 3) % all.len();
                        got.push((i, slice(all[i], n_items)));
                    }
                    let sims: Vec<_> = all[..2].iter().map(|&h| simulate(h, n_items)).collect();
                    (got, sims)
                })
            })
            .collect();
        for t in threads {
            let (got, sims) = t.join().unwrap();
            for (i, g) in got {
                assert_eq!(g, want[i], "slicer {i}");
            }
            assert_eq!(sims, want_sim);
        }
        for s in [greedy, knapsack, quota, count, cck] {
            cupel_slicer_free(s);
        }
        cupel_budget_free(budget);
        cupel_items_free(items);
    }
}

/// One tokenizer shared by many threads: every thread's counts are the
/// single-threaded ones (a tokenizer is immutable; each thread has its own
/// piece cache).
#[test]
fn threads_count_with_one_tokenizer() {
    let tk = cupel::text::tokenizer::Tokenizer::builtin("o200k_base").unwrap();
    let texts: Vec<String> = (0..200)
        .map(|i| {
            format!(
                "message {i}: the quick brown fox jumps over {} lazy dogs; 日本語 {i}",
                i * 7
            )
        })
        .collect();
    let want: Vec<usize> = texts.iter().map(|t| tk.count(t)).collect();
    std::thread::scope(|s| {
        for k in 0..8 {
            let (tk, texts, want) = (&tk, &texts, &want);
            s.spawn(move || {
                for round in 0..20 {
                    let i = (k * 31 + round * 7) % texts.len();
                    assert_eq!(tk.count(&texts[i]), want[i]);
                }
                let refs: Vec<&str> = texts.iter().map(|t| t.as_str()).collect();
                assert_eq!(&tk.count_many(&refs), want);
            });
        }
    });
}

/// One message of a simulated agent conversation.
struct Msg {
    key: u64,
    tokens: i64,
    score: f64,
    kind: &'static std::ffi::CStr,
    content: CString,
    pinned: bool,
    /// A tool call and its result share a group.
    group: u64,
    timestamp: i64,
}

/// Conversation `c`: a pinned system prompt, then per turn a user message,
/// now and then a tool call with its result (grouped), an assistant
/// message; the whole history soon far over the budget.
fn conversation(c: u64, turns: usize) -> Vec<Vec<Msg>> {
    let mut rng = Rng(0x5E55_1000 + c);
    let mut key = 0u64;
    let mut msg = |rng: &mut Rng, kind, group, turn: usize| {
        key += 1;
        Msg {
            key,
            tokens: 20 + rng.below(300) as i64,
            score: rng.below(1000) as f64 / 1000.0,
            kind,
            content: CString::new(format!("conversation {c} message {key}")).unwrap(),
            pinned: false,
            group,
            timestamp: 1_700_000_000_000 + turn as i64 * 60_000 + key as i64,
        }
    };
    let mut system = msg(&mut rng, c"SystemPrompt", 0, 0);
    system.pinned = true;
    let mut out = vec![vec![system]];
    for turn in 1..turns {
        let mut this = vec![msg(&mut rng, c"Message", 0, turn)];
        if rng.chance(50) {
            let group = 1000 + turn as u64;
            this.push(msg(&mut rng, c"ToolOutput", group, turn));
            this.push(msg(&mut rng, c"ToolOutput", group, turn));
        }
        this.push(msg(&mut rng, c"Message", 0, turn));
        out.push(this);
    }
    out
}

/// The list a host builds for turn `turn` of a conversation: every message
/// so far (keyed), then this turn's retrieved documents (volatile, new
/// content every turn).
unsafe fn turn_list(turns: &[Vec<Msg>], turn: usize, c: u64) -> *mut cupel_items {
    let mut items = ptr::null_mut();
    assert_eq!(cupel_items_new(&mut items), CUPEL_OK);
    let push = |m: &Msg| {
        let status = cupel_items_push(items, m.tokens, m.score, m.kind.as_ptr());
        assert_eq!(status, CUPEL_OK);
        let i = cupel_items_len(items) - 1;
        assert_eq!(cupel_items_set_key(items, i, m.key), CUPEL_OK);
        assert_eq!(
            cupel_items_set_content(items, i, m.content.as_ptr()),
            CUPEL_OK
        );
        assert_eq!(cupel_items_set_pinned(items, i, m.pinned), CUPEL_OK);
        assert_eq!(cupel_items_set_group(items, i, m.group), CUPEL_OK);
        assert_eq!(cupel_items_set_timestamp(items, i, m.timestamp), CUPEL_OK);
        i
    };
    for m in turns[..=turn].iter().flatten() {
        push(m);
    }
    let mut rng = Rng(0xD0C5 + c * 1000 + turn as u64);
    let docs: Vec<Msg> = (0..1 + rng.below(3))
        .map(|d| Msg {
            key: 1 << 40 | d,
            tokens: 50 + rng.below(200) as i64,
            score: 0.5 + rng.below(500) as f64 / 1000.0,
            kind: c"Document",
            content: CString::new(format!("turn {turn} document {d}")).unwrap(),
            pinned: false,
            group: 0,
            timestamp: 1_700_000_000_000 + turn as i64 * 60_000,
        })
        .collect();
    for d in &docs {
        let i = push(d);
        assert_eq!(cupel_items_set_volatile(items, i, true), CUPEL_OK);
    }
    items
}

/// What one turn of a session gave.
#[derive(Debug, PartialEq)]
struct Turn {
    out: Vec<usize>,
    action: cupel_session_action,
    stable: (usize, i64),
    breakpoints: Vec<cupel_breakpoint>,
}

/// The shared handles of the session test.
#[derive(Clone, Copy)]
struct SessionShared {
    pipeline: *const cupel_pipeline,
    budget: *const cupel_budget,
}
unsafe impl Send for SessionShared {}
unsafe impl Sync for SessionShared {}

/// Conversation `c` through a session of its own made from the shared
/// pipeline (a report every other turn), turn by turn.
unsafe fn run_conversation(h: SessionShared, c: u64, turns: usize) -> Vec<Turn> {
    let msgs = conversation(c, turns);
    let mut session = ptr::null_mut();
    assert_eq!(cupel_session_new(h.pipeline, &mut session), CUPEL_OK);
    let mut report = ptr::null_mut();
    assert_eq!(cupel_report_new(&mut report), CUPEL_OK);
    let mut got = vec![];
    for turn in 0..turns {
        let items = turn_list(&msgs, turn, c);
        let n = cupel_items_len(items);
        let mut out = vec![0usize; n];
        let mut len = 0;
        let status = cupel_session_run(
            session,
            items,
            h.budget,
            out.as_mut_ptr(),
            n,
            &mut len,
            if turn % 2 == 0 {
                report
            } else {
                ptr::null_mut()
            },
        );
        assert_eq!(status, CUPEL_OK, "conversation {c}, turn {turn}");
        out.truncate(len);
        let mut action = CUPEL_SESSION_FIRST;
        assert_eq!(cupel_session_last_action(session, &mut action), CUPEL_OK);
        let mut stable = (0, 0);
        assert_eq!(
            cupel_session_stable_prefix(session, &mut stable.0, &mut stable.1),
            CUPEL_OK
        );
        let mut breakpoints = [cupel_breakpoint {
            items: 0,
            tokens: 0,
            mark: 0,
        }; 4];
        let mut count = 0;
        assert_eq!(
            cupel_session_breakpoints(session, breakpoints.as_mut_ptr(), 4, &mut count),
            CUPEL_OK
        );
        got.push(Turn {
            out,
            action,
            stable,
            breakpoints: breakpoints[..count].to_vec(),
        });
        cupel_items_free(items);
    }
    cupel_report_free(report);
    cupel_session_free(session);
    got
}

#[test]
fn sixteen_threads_run_sessions_from_one_pipeline_like_one() {
    const CONVERSATIONS: u64 = 6;
    const TURNS: usize = 40;
    unsafe {
        let mut scorer = ptr::null_mut();
        assert_eq!(cupel_scorer_new_recency(&mut scorer), CUPEL_OK);
        let mut slicer = ptr::null_mut();
        assert_eq!(cupel_slicer_new_greedy(&mut slicer), CUPEL_OK);
        let mut placer = ptr::null_mut();
        assert_eq!(cupel_placer_new_chronological(&mut placer), CUPEL_OK);
        let mut pipeline = ptr::null_mut();
        assert_eq!(
            cupel_pipeline_new(scorer, slicer, placer, &mut pipeline),
            CUPEL_OK
        );
        cupel_scorer_free(scorer);
        cupel_slicer_free(slicer);
        cupel_placer_free(placer);
        let mut budget = ptr::null_mut();
        assert_eq!(cupel_budget_new(4000, 3000, &mut budget), CUPEL_OK);
        let h = SessionShared { pipeline, budget };

        // One at a time first.
        let want: Vec<Vec<Turn>> = (0..CONVERSATIONS)
            .map(|c| run_conversation(h, c, TURNS))
            .collect();
        let seen = |a| want.iter().flatten().filter(|t| t.action == a).count();
        assert!(
            seen(CUPEL_SESSION_APPEND) >= 50 && seen(CUPEL_SESSION_COMPACT) >= 5,
            "the conversations append and compact ({} and {})",
            seen(CUPEL_SESSION_APPEND),
            seen(CUPEL_SESSION_COMPACT)
        );
        assert!(want.iter().flatten().any(|t| t.stable.0 > 0));

        // Then sixteen at once, each with a session of its own (made at
        // the same time from the shared pipeline), several on the same
        // conversation.
        let start = std::sync::Barrier::new(16);
        let got: Vec<(u64, Vec<Turn>)> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..16u64)
                .map(|t| {
                    let start = &start;
                    s.spawn(move || {
                        let c = t % CONVERSATIONS;
                        start.wait();
                        (c, run_conversation(h, c, TURNS))
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        for (c, turns) in got {
            for (turn, (g, w)) in turns.iter().zip(&want[c as usize]).enumerate() {
                assert_eq!(g, w, "conversation {c}, turn {turn}");
            }
        }
        cupel_pipeline_free(pipeline);
        cupel_budget_free(budget);
    }
}
