//! The README's threading promise: many threads slicing at once on the same
//! const handles (each with its own report) get the single-threaded results.

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

#[test]
fn eight_threads_slice_shared_handles_like_one() {
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

        for slicer in [greedy, knapsack, quota, count, cck] {
            let h = Shared {
                slicer,
                items,
                budget,
            };
            let want = slice(h, n_items);
            assert!(!want.0.is_empty());
            let threads: Vec<_> = (0..8)
                .map(|_| {
                    std::thread::spawn(move || {
                        (0..10).map(|_| slice(h, n_items)).collect::<Vec<_>>()
                    })
                })
                .collect();
            for t in threads {
                for got in t.join().unwrap() {
                    assert_eq!(got, want);
                }
            }
        }
        for s in [greedy, knapsack, quota, count, cck] {
            cupel_slicer_free(s);
        }
        cupel_budget_free(budget);
        cupel_items_free(items);
    }
}
