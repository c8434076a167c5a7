//! Variant-free slicing times, written against the API that existed before
//! variants (issue 27), so that `benches/ab.sh` can build this same file at
//! an older commit and at HEAD and run the two alternately: lists without
//! variants must be no slower than before.
//!
//!     cargo bench --bench plain          # this tree only
//!     bash benches/ab.sh ce71f59 5       # against ce71f59, 5 rounds each
//!
//! Prints one line per case: `case<TAB>median ms` (median of 31 calls
//! after 3 warm-up calls). The last cases run the whole pipeline without a
//! trace (issue 29: tracing costs nothing when off), measured against the
//! commit before tracing with `bash benches/ab.sh 512774a 5`.

use std::hint::black_box;
use std::time::Instant;

use cupel::pipeline::Pipeline;
use cupel::placer::Placer;
use cupel::scorer::Scorer;
use cupel::testing::Rng;
use cupel::{Budget, Engine, Items, Knapsack, NewItem, Slicer};

const KINDS: [&str; 4] = ["Message", "Document", "ToolOutput", "Memory"];

/// `n` items of 1..=max_tokens tokens and scores in [0, 1).
fn items(n: usize, max_tokens: u64, seed: u64) -> Items {
    let mut rng = Rng(seed);
    let mut items = Items::new();
    for _ in 0..n {
        let tokens = 1 + rng.below(max_tokens) as i64;
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

fn median_ms(mut f: impl FnMut()) -> f64 {
    for _ in 0..3 {
        f();
    }
    let mut t: Vec<f64> = (0..31)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[t.len() / 2]
}

fn main() {
    let cases: [(&str, usize, u64, i64, Slicer); 4] = [
        ("greedy N=10000", 10_000, 1000, 128_000, Slicer::Greedy),
        ("greedy N=100000", 100_000, 1000, 128_000, Slicer::Greedy),
        (
            "knapsack N=7800 (bucket 100)",
            7_800,
            1000,
            128_000,
            Slicer::Knapsack(Knapsack::new(100).unwrap()),
        ),
        (
            "knapsack N=2000 (bucket 1)",
            2_000,
            400,
            16_000,
            Slicer::Knapsack(Knapsack::new(1).unwrap()),
        ),
    ];
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    for (name, n, max_tokens, target, slicer) in cases {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let list = items(n, max_tokens, 27);
        let budget = Budget::new(target, target).unwrap();
        let engine = Engine::new(slicer);
        let ms = median_ms(|| {
            black_box(engine.slice(&list, &budget, 0).unwrap());
        });
        println!("{name}\t{ms:.3}");
    }
    // The pipeline: 2 x recency + 1 x kind, deduplication, GreedySlice,
    // chronological; contents of 50-2,000 bytes, one in ten repeated.
    for n in [1_000usize, 10_000] {
        let name = format!("pipeline N={n}");
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let mut list = items(n, 1000, 29);
        let mut rng = Rng(31);
        for i in 0..n {
            let k = if rng.below(10) == 0 {
                rng.below(n as u64 / 10 + 1)
            } else {
                i as u64
            };
            let len = 50 + (k * 7919 % 1951) as usize;
            let unit = format!("item {k} ");
            let text: String = unit.repeat(len / unit.len() + 1)[..len].to_string();
            list.set_content(i, &text).unwrap();
            list.set_timestamp(i, 1_700_000_000_000 + rng.below(1 << 30) as i64)
                .unwrap();
        }
        let scorer = Scorer::composite(vec![
            (Scorer::Recency, 2.0),
            (Scorer::kind(None).unwrap(), 1.0),
        ])
        .unwrap();
        let pipeline = Pipeline::new(
            Some(scorer),
            Engine::new(Slicer::Greedy),
            Some(Placer::Chronological),
        );
        let budget = Budget::new(128_000, 64_000).unwrap();
        let ms = median_ms(|| {
            black_box(pipeline.run(&list, &budget, None).unwrap());
        });
        println!("{name}\t{ms:.3}");
    }
}
