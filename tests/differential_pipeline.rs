//! Differential test of `cupel_pipeline_run` against the `cupel` 1.2.0
//! crate's `Pipeline` (an independent implementation of the same spec) on
//! thousands of seeded random item lists with every field populated, every
//! scorer, slicer, placer, overflow strategy and deduplication setting: the
//! same placed output and the same included/excluded decisions with their
//! reasons and data. Items carry their index in metadata `_idx`, so
//! duplicates map back to indices on the crate's side.
//!
//! Where the crate departs from the specification, the case is named here
//! with the spec line, and the generator steers around it:
//!
//! 1. The crate re-associates scores to the sliced items by content, not by
//!    identity (`spec/cupel/pipeline/slice.md`, conformance notes: "Scores
//!    are re-associated by the pipeline after slicing, by matching items
//!    back to their scored counterparts using reference identity"). With
//!    deduplication off and repeated contents it gives an item another
//!    item's score (seen: a timestamp-less item scored 0.1, the other's
//!    step-window score, instead of its null_timestamp_score 0.8), which
//!    changes placement. With deduplication on every surviving content is
//!    unique, so the cases with deduplication off use distinct contents.
//! 2. QuotaSlice and the count slicers emit kinds in alphabetical order
//!    (`spec/supplement.md` section 9: "same sets, other output order").
//!    The merged list the placer orders follows the slicer's output, so
//!    placement ties, and the order of exclusions with equal scores, may
//!    differ: for those slicers the placed items and the decisions are
//!    compared as sets (each item's score, reason and data still equal).
//!    For the count slicers the order also decides which items reach a
//!    kind's cap or meet the budget on the way (the crate even reports a
//!    negative available budget after its Phase 1 commits), so an item one
//!    side reports as CountCapExceeded, BudgetExceeded or PinnedOverride
//!    the other may report under another of the three, with the same
//!    final selection: there those three count as one Slice-stage
//!    exclusion, and their data is not compared. And as only the count
//!    slicers exceed the target (Phase 1 commits beyond it), truncation
//!    keeps a prefix of a merged list whose order is this departure's: the
//!    generator pairs count slicers with Throw and Proceed only.

mod common;

// The oracle adapter, shared with the versus_reference fuzz target.
#[path = "../fuzz/src/pipeline_ref.rs"]
mod pipeline_ref;

// The random pipelines, shared with tests/groups.rs.
#[path = "common/cases.rs"]
mod cases;

use cases::random_case;
use common::Rng;
use pipeline_ref::*;

const CASES: u64 = 3000;
// ---- the crate's side --------------------------------------------------

#[test]
fn pipeline_matches_the_cupel_crate() {
    // SEED=<n> runs another set of cases.
    let seed = std::env::var("SEED").map_or(0xC0FF_EE00_D15E_A5E5, |s| s.parse().unwrap());
    let mut rng = Rng(seed);
    let (mut compared, mut errors_both) = (0u64, 0u64);
    for case_no in 0..CASES {
        let c = random_case(&mut rng);
        match compare(&c) {
            Ok(true) => compared += 1,
            Ok(false) => errors_both += 1,
            Err(e) => panic!("case {case_no}: {e}\n{c:#?}"),
        }
    }
    println!("{compared} pipelines compared, {errors_both} failing on both sides");
    assert!(compared > CASES * 3 / 5, "only {compared} cases compared");
    assert!(errors_both > 0, "no error case was exercised");
}
