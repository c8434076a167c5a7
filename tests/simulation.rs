//! Property tests of budget simulation (supplement 8) on seeded random cases.

mod common;

use common::Rng;
use cupel::{Budget, Engine, Items, Knapsack, NewItem, Slicer};

fn random_items(rng: &mut Rng) -> Items {
    let mut items = Items::new();
    for _ in 0..1 + rng.below(30) {
        let tokens = if rng.below(10) == 0 {
            0
        } else {
            1 + rng.below(300) as i64
        };
        let score = rng.below(101) as f64 / 100.0;
        items
            .push(NewItem {
                tokens,
                score,
                kind: None,
            })
            .unwrap();
    }
    items
}

fn selected(engine: &Engine, items: &Items, b: i64, pinned: i64) -> Vec<u32> {
    engine
        .slice(items, &Budget::new(b, b).unwrap(), pinned)
        .unwrap()
        .selected
}

#[test]
fn find_min_budget_answer_is_the_threshold_for_greedy() {
    let engine = Engine::new(Slicer::Greedy);
    let mut rng = Rng(11);
    let mut checked = 0;
    for case_no in 0..2000 {
        let items = random_items(&mut rng);
        let target = rng.below(items.len() as u64) as usize;
        let pinned = if rng.below(4) == 0 {
            rng.below(100) as i64
        } else {
            0
        };
        let tokens = items.view().tokens(target as u32);
        let ceiling = tokens + rng.below(3000) as i64;
        let found = engine
            .find_min_budget(&items, pinned, target, ceiling)
            .unwrap();
        match found {
            Some(b) => {
                assert!(
                    (tokens..=ceiling).contains(&b),
                    "case {case_no}: {b} outside the search range"
                );
                assert!(
                    selected(&engine, &items, b, pinned).contains(&(target as u32)),
                    "case {case_no}: not selected at {b}"
                );
                if b > tokens {
                    checked += 1;
                    assert!(
                        !selected(&engine, &items, b - 1, pinned).contains(&(target as u32)),
                        "case {case_no}: selected at {} already",
                        b - 1
                    );
                }
            }
            None => assert!(
                !selected(&engine, &items, ceiling, pinned).contains(&(target as u32)),
                "case {case_no}: reachable at the ceiling but reported unreachable"
            ),
        }
    }
    assert!(
        checked > 500,
        "only {checked} cases had an answer above the item's tokens"
    );
}

#[test]
fn marginal_items_are_the_difference_of_two_slices() {
    let mut rng = Rng(12);
    let mut non_empty = 0;
    for case_no in 0..2000 {
        let items = random_items(&mut rng);
        let slicer = match rng.below(3) {
            0 => Slicer::Greedy,
            1 => Slicer::Knapsack(Knapsack::new(1).unwrap()),
            _ => Slicer::Knapsack(Knapsack::new(7).unwrap()),
        };
        let engine = Engine::new(slicer);
        let target = rng.below(3000) as i64;
        let max = target + rng.below(500) as i64;
        let mut budget = Budget::new(max, target).unwrap();
        budget
            .set_output_reserve(rng.below(max as u64 - target as u64 + 1) as i64)
            .unwrap();
        let slack = rng.below(target as u64 + 1) as i64;
        let pinned = rng.below(50) as i64;
        let got = engine
            .marginal_items(&items, &budget, pinned, slack)
            .unwrap();
        let full = engine.slice(&items, &budget, pinned).unwrap().selected;
        let less = engine
            .slice(&items, &budget.reduced_by(slack).unwrap(), pinned)
            .unwrap()
            .selected;
        let want: Vec<u32> = full.iter().copied().filter(|i| !less.contains(i)).collect();
        assert_eq!(got, want, "case {case_no}");
        non_empty += !got.is_empty() as u32;
    }
    assert!(non_empty > 500, "only {non_empty} cases had marginal items");
}
