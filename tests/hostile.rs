//! Hostile inputs through the C ABI: extreme integers and floats, odd kinds,
//! huge item counts, deliberate panics. Each call must give its documented
//! status and a message naming the argument and value, and leave every
//! handle as it was.

use cupel::ffi::*;
use std::ffi::{c_char, CStr, CString};
use std::ptr;

fn last_error() -> String {
    unsafe { CStr::from_ptr(cupel_last_error()) }
        .to_string_lossy()
        .into_owned()
}

#[track_caller]
fn expect(status: cupel_status, want: cupel_status, fragments: &[&str]) {
    assert_eq!(status, want, "message: {}", last_error());
    let msg = last_error();
    for f in fragments {
        assert!(msg.contains(f), "message {msg:?} lacks {f:?}");
    }
}

struct Handles {
    items: *mut cupel_items,
    budget: *mut cupel_budget,
    slicer: *mut cupel_slicer,
}

impl Handles {
    fn new(max: i64, target: i64, slicer: *mut cupel_slicer) -> Self {
        let mut h = Handles {
            items: ptr::null_mut(),
            budget: ptr::null_mut(),
            slicer,
        };
        unsafe {
            assert_eq!(cupel_items_new(&mut h.items), CUPEL_OK);
            assert_eq!(cupel_budget_new(max, target, &mut h.budget), CUPEL_OK);
        }
        h
    }

    fn push(&self, tokens: i64, score: f64) {
        assert_eq!(
            unsafe { cupel_items_push(self.items, tokens, score, ptr::null()) },
            CUPEL_OK,
            "{}",
            last_error()
        );
    }

    fn slice(&self) -> Result<(Vec<usize>, i64), (cupel_status, String)> {
        unsafe {
            let n = cupel_items_len(self.items);
            let mut out = vec![usize::MAX; n.max(1)];
            let mut len = 0;
            let mut report = ptr::null_mut();
            assert_eq!(cupel_report_new(&mut report), CUPEL_OK);
            let st = cupel_slice(
                self.slicer,
                self.items,
                self.budget,
                0,
                out.as_mut_ptr(),
                out.len(),
                &mut len,
                report,
            );
            let tokens = cupel_report_selected_tokens(report);
            cupel_report_free(report);
            if st != CUPEL_OK {
                return Err((st, last_error()));
            }
            out.truncate(len);
            let mut seen = out.clone();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), out.len(), "duplicate indices in {out:?}");
            assert!(out.iter().all(|&i| i < n), "index out of range in {out:?}");
            Ok((out, tokens))
        }
    }
}

impl Drop for Handles {
    fn drop(&mut self) {
        unsafe {
            cupel_items_free(self.items);
            cupel_budget_free(self.budget);
            cupel_slicer_free(self.slicer);
        }
    }
}

fn greedy() -> *mut cupel_slicer {
    let mut s = ptr::null_mut();
    assert_eq!(unsafe { cupel_slicer_new_greedy(&mut s) }, CUPEL_OK);
    s
}

fn knapsack(bucket: i64) -> *mut cupel_slicer {
    let mut s = ptr::null_mut();
    assert_eq!(
        unsafe { cupel_slicer_new_knapsack(bucket, &mut s) },
        CUPEL_OK
    );
    s
}

#[test]
fn extreme_tokens_and_budgets() {
    for slicer in [greedy(), knapsack(i64::MAX / 4), knapsack(1 << 40)] {
        let h = Handles::new(i64::MAX, i64::MAX, slicer);
        // Token sums overflow i64 several times over.
        for score in [0.9, 0.8, 0.7, 0.6] {
            h.push(i64::MAX, score);
        }
        h.push(i64::MAX - 1, f64::MAX);
        h.push(0, -f64::MAX);
        h.push(1, f64::MIN_POSITIVE);
        let (out, tokens) = h.slice().expect("extreme values are valid input");
        assert!(!out.is_empty());
        assert!(
            tokens >= 0,
            "selected tokens {tokens} must saturate, not wrap"
        );
        // Determinism.
        assert_eq!(h.slice().unwrap().0, out);
    }
    // pinned tokens beyond the budget: nothing fits, no overflow.
    let h = Handles::new(i64::MAX, i64::MAX, greedy());
    h.push(10, 0.5);
    let mut max = 0;
    let mut target = 0;
    let st = unsafe { cupel_budget_effective(h.budget, i64::MAX, &mut max, &mut target) };
    assert!(
        st == CUPEL_OK || st == CUPEL_ERROR_INVALID_ARGUMENT,
        "{st:?}"
    );
    let st = unsafe { cupel_budget_effective(h.budget, -1, &mut max, &mut target) };
    expect(st, CUPEL_ERROR_INVALID_ARGUMENT, &["pinned_tokens", "-1"]);
    let mut b = ptr::null_mut();
    expect(
        unsafe { cupel_budget_new(i64::MIN, 0, &mut b) },
        CUPEL_ERROR_INVALID_ARGUMENT,
        &["max_tokens", &i64::MIN.to_string()],
    );
    assert!(b.is_null(), "no handle on failure");
}

#[test]
fn zero_and_one_item() {
    for slicer in [greedy(), knapsack(1)] {
        let h = Handles::new(100, 100, slicer);
        assert_eq!(h.slice().unwrap().0, Vec::<usize>::new());
        h.push(100, 0.5);
        assert_eq!(h.slice().unwrap().0, vec![0]);
    }
    let h = Handles::new(100, 100, greedy());
    h.push(101, 0.5);
    assert_eq!(h.slice().unwrap().0, Vec::<usize>::new());
}

#[test]
fn capacity_error_for_a_huge_exact_knapsack() {
    let h = Handles::new(i64::MAX, i64::MAX / 2, knapsack(1));
    h.push(1, 0.5);
    h.push(2, 0.7);
    let err = h.slice().unwrap_err();
    assert_eq!(err.0, CUPEL_ERROR_CAPACITY, "{}", err.1);
    assert!(
        err.1.contains("bucket_size 1") && err.1.contains("memory limit of 1073741824 bytes"),
        "{}",
        err.1
    );
    // The slicer is unchanged: a feasible budget still works.
    let ok = Handles::new(10, 10, knapsack(1));
    ok.push(1, 0.5);
    assert_eq!(ok.slice().unwrap().0, vec![0]);
    // A tiny memory limit fails a small problem the same way, and 0 is valid.
    unsafe {
        assert_eq!(cupel_slicer_set_memory_limit(ok.slicer, 0), CUPEL_OK);
    }
    assert_eq!(ok.slice().unwrap_err().0, CUPEL_ERROR_CAPACITY);
}

#[test]
fn ten_million_items() {
    let n = 10_000_000usize;
    let tokens: Vec<i64> = (0..n as i64).map(|i| 1 + i % 1000).collect();
    let scores: Vec<f64> = (0..n).map(|i| (i % 9973) as f64 / 9973.0).collect();
    // Handles for a budget of `target` tokens holding all n items.
    let with_items = |target: i64, slicer: *mut cupel_slicer| {
        let h = Handles::new(target, target, slicer);
        unsafe {
            let st =
                cupel_items_push_many(h.items, n, tokens.as_ptr(), scores.as_ptr(), ptr::null());
            assert_eq!(st, CUPEL_OK, "{}", last_error());
            assert_eq!(cupel_items_len(h.items), n);
        }
        h
    };
    let (out, used) = with_items(128_000, greedy()).slice().unwrap();
    assert!(used <= 128_000 && used > 127_000, "used {used}");
    assert!(out.len() > 1000);
    // A knapsack at bucket 100 would need a 1.6 GB table for all of them,
    // but in score order all but a few rows per weight are dominated and
    // dropped (see knapsack.rs): it runs, within the default 1 GiB.
    let k = with_items(128_000, knapsack(100));
    let (out, used) = k.slice().unwrap();
    assert!(!out.is_empty() && used <= 128_000, "used {used}");
    assert_eq!(k.slice().unwrap(), (out, used), "deterministic");
    // At bucket 1 for a 10M target, the rows that are left after the filter
    // (at least the ~20,000 it takes to weigh 10M) need tens of GB: refused,
    // not attempted.
    let err = with_items(10_000_000, knapsack(1)).slice().unwrap_err();
    assert_eq!(err.0, CUPEL_ERROR_CAPACITY, "{}", err.1);
    assert!(err.1.contains("over the memory limit"), "{}", err.1);
}

#[test]
fn percentages_at_the_edges() {
    let mut b = ptr::null_mut();
    unsafe {
        assert_eq!(cupel_budget_new(1000, 1000, &mut b), CUPEL_OK);
        assert_eq!(cupel_budget_set_safety_margin(b, 1e-300), CUPEL_OK);
        // The budget's effective (max, target).
        let effective = || {
            let (mut max, mut target) = (0, 0);
            assert_eq!(
                cupel_budget_effective(b, 0, &mut max, &mut target),
                CUPEL_OK
            );
            (max, target)
        };
        assert_eq!(
            effective(),
            (1000, 1000),
            "a 1e-300 % margin rounds to nothing"
        );
        for bad in [100.0000001, -1e-300, f64::NAN, f64::INFINITY] {
            expect(
                cupel_budget_set_safety_margin(b, bad),
                CUPEL_ERROR_INVALID_ARGUMENT,
                &["percent", &format!("{bad}")],
            );
        }
        assert_eq!(
            effective(),
            (1000, 1000),
            "failed calls left the budget as it was"
        );
        cupel_budget_free(b);
    }
    let kind = CString::new("Document").unwrap();
    let g = greedy();
    for (require, cap, ok) in [
        (1e-300, 100.0, true),
        (0.0, 1e-300, true),
        (0.0, 100.0000001, false),
        (100.0000001, 100.0000001, false),
        (f64::NAN, 50.0, false),
        (-1e-300, 50.0, false),
    ] {
        let q = [cupel_quota {
            kind: kind.as_ptr(),
            require_percent: require,
            cap_percent: cap,
        }];
        let mut s = ptr::null_mut();
        let st = unsafe { cupel_slicer_new_quota(g, q.as_ptr(), 1, &mut s) };
        if ok {
            assert_eq!(st, CUPEL_OK, "{require} {cap}: {}", last_error());
            let h = Handles::new(1000, 1000, s);
            h.push(10, 0.5);
            h.slice().unwrap();
        } else {
            assert_eq!(st, CUPEL_ERROR_INVALID_ARGUMENT, "{require} {cap}");
            assert!(s.is_null());
            let msg = last_error();
            assert!(msg.contains("percent") && msg.contains("Document"), "{msg}");
        }
    }
    unsafe { cupel_slicer_free(g) };
}

#[test]
fn bad_scores_and_negative_zero() {
    let h = Handles::new(100, 100, greedy());
    for (i, bad) in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY]
        .into_iter()
        .enumerate()
    {
        let st = unsafe { cupel_items_push(h.items, 1, bad, ptr::null()) };
        expect(
            st,
            CUPEL_ERROR_INVALID_ARGUMENT,
            &["score", &format!("{bad}")],
        );
        let tokens = [1i64, 2, 3];
        let mut scores = [0.5, 0.5, 0.5];
        scores[i] = bad;
        let st = unsafe {
            cupel_items_push_many(h.items, 3, tokens.as_ptr(), scores.as_ptr(), ptr::null())
        };
        expect(
            st,
            CUPEL_ERROR_INVALID_ARGUMENT,
            &[&format!("scores[{i}]"), &format!("{bad}")],
        );
    }
    assert_eq!(
        unsafe { cupel_items_len(h.items) },
        0,
        "failed pushes add nothing"
    );
    // -0.0 and 0.0 are one score: push order decides.
    let h = Handles::new(20, 20, greedy());
    h.push(10, -0.0);
    h.push(10, 0.0);
    h.push(10, -0.0);
    let k = Handles::new(20, 20, knapsack(1));
    for s in [-0.0, 0.0, -0.0] {
        k.push(10, s);
    }
    assert_eq!(h.slice().unwrap().0, vec![0, 1]);
    assert_eq!(
        k.slice().unwrap().0.len(),
        0,
        "score 0 has knapsack value 0"
    );
}

#[test]
fn odd_kinds() {
    let h = Handles::new(100, 100, greedy());
    let cases: [(&[u8], &str); 4] = [
        (b"\0", "empty"),
        (b"   \t\0", "whitespace"),
        (b"Doc\xff\xfe\0", "UTF-8"),
        (b"\xc3\0", "UTF-8"),
    ];
    for (bytes, what) in cases {
        let k = bytes.as_ptr() as *const c_char;
        expect(
            unsafe { cupel_items_push(h.items, 1, 0.5, k) },
            CUPEL_ERROR_INVALID_ARGUMENT,
            &["kind", what],
        );
        let kinds = [c"ok".as_ptr(), k];
        let st = unsafe {
            cupel_items_push_many(
                h.items,
                2,
                [1i64, 2].as_ptr(),
                [0.1, 0.2].as_ptr(),
                kinds.as_ptr(),
            )
        };
        expect(st, CUPEL_ERROR_INVALID_ARGUMENT, &["kinds[1]", what]);
        expect(
            unsafe { cupel_budget_reserve(h.budget, k, 5) },
            CUPEL_ERROR_INVALID_ARGUMENT,
            &["kind", what],
        );
    }
    assert_eq!(unsafe { cupel_items_len(h.items) }, 0);
    // Non-ASCII kinds are fine and folded only in ASCII.
    let k = CString::new("Ünïcode-kind 中").unwrap();
    assert_eq!(
        unsafe { cupel_items_push(h.items, 1, 0.5, k.as_ptr()) },
        CUPEL_OK
    );
}

#[test]
fn a_hundred_thousand_kinds() {
    let n = 100_000;
    let names: Vec<CString> = (0..n)
        .map(|i| CString::new(format!("kind-{i}")).unwrap())
        .collect();
    let ptrs: Vec<*const c_char> = names.iter().map(|c| c.as_ptr()).collect();
    let tokens: Vec<i64> = (0..n as i64).map(|i| 1 + i % 50).collect();
    let scores: Vec<f64> = (0..n).map(|i| (i % 101) as f64 / 100.0).collect();
    let g = greedy();
    // Count entries for every kind: require 1, cap 1.
    let entries: Vec<cupel_count_quota> = ptrs
        .iter()
        .map(|&k| cupel_count_quota {
            kind: k,
            require_count: 1,
            cap_count: 1,
        })
        .collect();
    let mut cq = ptr::null_mut();
    assert_eq!(
        unsafe { cupel_slicer_new_count_quota(g, entries.as_ptr(), n, 0, &mut cq) },
        CUPEL_OK,
        "{}",
        last_error()
    );
    unsafe { cupel_slicer_free(g) };
    let h = Handles::new(1 << 40, 1 << 40, cq);
    unsafe {
        assert_eq!(
            cupel_items_push_many(h.items, n, tokens.as_ptr(), scores.as_ptr(), ptrs.as_ptr()),
            CUPEL_OK
        );
    }
    let (out, _) = h.slice().unwrap();
    assert_eq!(out.len(), n, "one item of each kind, every one required");
    // The same kind twice is refused by name.
    let dup = [entries[7], entries[7]];
    let mut s = ptr::null_mut();
    let g = greedy();
    expect(
        unsafe { cupel_slicer_new_count_quota(g, dup.as_ptr(), 2, 0, &mut s) },
        CUPEL_ERROR_INVALID_ARGUMENT,
        &["kind-7"],
    );
    unsafe { cupel_slicer_free(g) };
}

#[test]
fn out_of_range_enums_and_lengths() {
    let g = greedy();
    let mut s = ptr::null_mut();
    for bad in [-1, 2, i32::MAX, i32::MIN] {
        expect(
            unsafe { cupel_slicer_new_count_quota(g, ptr::null(), 0, bad, &mut s) },
            CUPEL_ERROR_INVALID_ARGUMENT,
            &["scarcity", &bad.to_string()],
        );
        let name = unsafe { CStr::from_ptr(cupel_status_str(bad)) };
        assert!(!name.to_bytes().is_empty());
    }
    // A length whose byte size overflows is refused before any read.
    let h = Handles::new(10, 10, greedy());
    let one = [1i64];
    let half = [0.5];
    expect(
        unsafe {
            cupel_items_push_many(
                h.items,
                usize::MAX,
                one.as_ptr(),
                half.as_ptr(),
                ptr::null(),
            )
        },
        CUPEL_ERROR_INVALID_ARGUMENT,
        &["tokens: length", &usize::MAX.to_string()],
    );
    unsafe { cupel_slicer_free(g) };
}

#[test]
fn a_panic_in_the_core_is_internal_and_contained() {
    expect(
        cupel_debug_panic(),
        CUPEL_ERROR_INTERNAL,
        &["deliberate panic from cupel_debug_panic"],
    );
    // The library keeps working on this thread after the panic.
    let h = Handles::new(10, 10, greedy());
    h.push(5, 0.5);
    assert_eq!(h.slice().unwrap().0, vec![0]);
}

#[test]
fn tokenizers_refuse_what_they_cannot_read() {
    let mut t = ptr::null_mut();
    assert_eq!(
        unsafe { cupel_tokenizer_new(c"o200k_base".as_ptr(), &mut t) },
        CUPEL_OK
    );
    let mut n = -1i64;
    // A length that does not fit in memory, and a NULL text with a length.
    expect(
        unsafe { cupel_tokenizer_count(t, c"x".as_ptr(), usize::MAX, &mut n) },
        CUPEL_ERROR_INVALID_ARGUMENT,
        &["text: length"],
    );
    expect(
        unsafe { cupel_tokenizer_count(t, ptr::null(), 1, &mut n) },
        CUPEL_ERROR_NULL_POINTER,
        &["text"],
    );
    // Every keep value outside the enum, and extreme budgets.
    let text = "one two three four five";
    let (mut h, mut tl) = (7usize, 7usize);
    for bad in [-1, 3, i32::MAX, i32::MIN] {
        expect(
            unsafe {
                cupel_tokenizer_truncate(
                    t,
                    text.as_ptr().cast(),
                    text.len(),
                    2,
                    bad,
                    &mut h,
                    &mut tl,
                    &mut n,
                )
            },
            CUPEL_ERROR_INVALID_ARGUMENT,
            &["keep", &bad.to_string()],
        );
    }
    expect(
        unsafe {
            cupel_tokenizer_truncate(
                t,
                text.as_ptr().cast(),
                text.len(),
                i64::MIN,
                0,
                &mut h,
                &mut tl,
                &mut n,
            )
        },
        CUPEL_ERROR_INVALID_ARGUMENT,
        &["max_tokens", &i64::MIN.to_string()],
    );
    assert_eq!((h, tl, n), (7, 7, -1), "a failed call wrote");
    let status = unsafe {
        cupel_tokenizer_truncate(
            t,
            text.as_ptr().cast(),
            text.len(),
            i64::MAX,
            2,
            &mut h,
            &mut tl,
            &mut n,
        )
    };
    assert_eq!(status, CUPEL_OK);
    assert_eq!((h, tl, n), (text.len(), text.len(), 5));
    // Ten megabytes of text in one call, and a vocabulary file of garbage.
    let big = "word ".repeat(2_000_000);
    assert_eq!(
        unsafe { cupel_tokenizer_count(t, big.as_ptr().cast(), big.len(), &mut n) },
        CUPEL_OK
    );
    assert_eq!(n, 2_000_001); // "word", then " word" each time, and the last space
    let garbage: Vec<u8> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let mut u = ptr::null_mut();
    expect(
        unsafe {
            cupel_tokenizer_from_tiktoken(garbage.as_ptr(), garbage.len(), ptr::null(), &mut u)
        },
        CUPEL_ERROR_INVALID_ARGUMENT,
        &["line 1"],
    );
    assert!(u.is_null());
    unsafe { cupel_tokenizer_free(t) };
}
