//! One case of the instruction-count guard per run, named by the first
//! argument; its input is built outside `measured` so that callgrind
//! (`--toggle-collect=*measured*`) counts only the work:
//!
//! - `pipeline`: the whole pipeline at N = 1,000 (Composite(Recency 2,
//!   Priority 1, Kind 1), deduplication, GreedySlice, chronological) over
//!   realistic items (`cupel::testing::realistic`, as benches/floor.rs);
//! - `greedy`, `knapsack`, `quota`: one slice call at N = 10,000 (tokens
//!   1..1000; target 128,000; KnapsackSlice(100); QuotaSlice over greedy).

use std::hint::black_box;

use cupel::pipeline::Pipeline;
use cupel::placer::Placer;
use cupel::scorer::Scorer;
use cupel::testing::Rng;
use cupel::{Budget, Engine, Items, Knapsack, NewItem, Quota, QuotaEntry, Slicer};

const KINDS: [&str; 4] = ["Message", "Document", "ToolOutput", "Memory"];

fn items(n: usize) -> Items {
    let mut rng = Rng(27);
    let mut items = Items::new();
    for _ in 0..n {
        let tokens = 1 + rng.below(1000) as i64;
        let score = rng.below(10_000) as f64 / 10_000.0;
        let kind = Some(KINDS[rng.below(4) as usize]);
        items
            .push(NewItem {
                tokens,
                score,
                kind,
            })
            .unwrap();
    }
    items
}

enum Case {
    Pipeline(Pipeline, Items, Budget),
    Slice(Engine, Items, Budget),
}

#[inline(never)]
fn measured(case: &Case) {
    match case {
        Case::Pipeline(p, items, budget) => {
            black_box(p.run(black_box(items), budget, None).unwrap());
        }
        Case::Slice(e, items, budget) => {
            black_box(e.slice(black_box(items), budget, 0).unwrap());
        }
    }
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    let slicer = |s| {
        Case::Slice(
            Engine::new(s),
            items(10_000),
            Budget::new(128_000, 128_000).unwrap(),
        )
    };
    let case = match name.as_str() {
        "pipeline" => {
            let (items, _) = cupel::testing::realistic(1_000, 1_030);
            let total: i64 = (0..1_000u32).map(|i| items.view().tokens(i)).sum();
            let scorer = Scorer::composite(vec![
                (Scorer::Recency, 2.0),
                (Scorer::Priority, 1.0),
                (Scorer::kind(None).unwrap(), 1.0),
            ])
            .unwrap();
            let p = Pipeline::new(
                Some(scorer),
                Engine::new(Slicer::Greedy),
                Some(Placer::Chronological),
            );
            Case::Pipeline(p, items, Budget::new(total / 4 + 1000, total / 4).unwrap())
        }
        "greedy" => slicer(Slicer::Greedy),
        "knapsack" => slicer(Slicer::Knapsack(Knapsack::new(100).unwrap())),
        "quota" => {
            let entries = vec![
                QuotaEntry {
                    kind: "Message".into(),
                    require_percent: 20.0,
                    cap_percent: 60.0,
                },
                QuotaEntry {
                    kind: "Document".into(),
                    require_percent: 10.0,
                    cap_percent: 40.0,
                },
            ];
            slicer(Slicer::Quota(Quota::new(Slicer::Greedy, entries).unwrap()))
        }
        other => {
            eprintln!("usage: cupel-perf-guard pipeline|greedy|knapsack|quota (not {other:?})");
            std::process::exit(2);
        }
    };
    measured(&case);
}
