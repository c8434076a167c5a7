//! The threading promise (docs/c-api.md, Threads): many threads slicing at once on the same
//! const handles (each with its own report), every slicer at once, get the
//! single-threaded results; budget simulation too.

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
