//! Lists without variants or truncatable items give exactly the results
//! of before the feature (issue 27): the differential test's random
//! pipelines, half of them with keep-together groups, run through the C ABI
//! and digested (status, placed items, every decision with all its fields),
//! against digests this test recorded at ce71f59, the commit before
//! variants existed (`RECORD=<file>` writes them).

mod common;

#[path = "common/cases.rs"]
mod cases;
#[path = "../fuzz/src/pipeline_ref.rs"]
mod pipeline_ref;

use common::Rng;

/// FNV-1a, 64 bits: a stable digest of a run's output.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The digests of the differential test's random pipelines (half of them
/// with keep-together groups), each run through the C ABI: the status, the
/// placed items and every decision with all its fields (doubles by their
/// bits).
fn digests() -> Vec<u64> {
    let mut rng = Rng(0x6F1D_E27A);
    (0..400)
        .map(|k| {
            let mut c = cases::random_case(&mut rng);
            if k % 2 == 1 {
                for it in &mut c.items {
                    it.group = [0, 0, 1, 2][rng.below(4) as usize];
                }
            }
            // SAFETY: the adapter's calls follow the C ABI's rules.
            let text = match unsafe { pipeline_ref::ours_raw(&c) } {
                Err(status) => format!("error {status:?}"),
                Ok((_, (placed, included, excluded))) => {
                    let d = |d: &cupel::ffi::cupel_decision| {
                        format!(
                            "{} {:x} {} {} {} {} {} {}",
                            d.item_index,
                            d.score.to_bits(),
                            d.reason,
                            d.item_tokens,
                            d.available_tokens,
                            d.related_index,
                            d.group,
                            d.group_tokens
                        )
                    };
                    let inc: Vec<String> = included.iter().map(d).collect();
                    let exc: Vec<String> = excluded.iter().map(d).collect();
                    format!("{placed:?}|{inc:?}|{exc:?}")
                }
            };
            fnv(&text)
        })
        .collect()
}

/// Digests recorded by this test at ce71f59, the commit before variants
/// existed (RECORD=<file> writes them).
#[test]
fn lists_without_variants_give_the_results_of_before() {
    let got = digests();
    if let Ok(path) = std::env::var("RECORD") {
        let text: String = got.iter().map(|d| format!("{d:016x}\n")).collect();
        std::fs::write(path, text).unwrap();
        return;
    }
    let want: Vec<u64> = include_str!("golden/variant_free.txt")
        .lines()
        .map(|l| u64::from_str_radix(l, 16).unwrap())
        .collect();
    assert_eq!(want.len(), got.len());
    for (k, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(w, g, "case {k} differs from before variants");
    }
}
