//! The per-turn pipeline against a floor (issue 30): the whole pipeline
//! (Composite(Recency 2, Priority 1, Kind 1), deduplication, GreedySlice or
//! KnapsackSlice(100), chronological placer) over realistic items (contents
//! of 50-2,000 bytes, one in ten repeating an earlier one, timestamps,
//! priorities, five kinds; a budget of a quarter of the tokens), and in the
//! same run the floor: one pass over every content byte with xxh3 plus one
//! sort of the N scores.
//!
//!     cargo bench --bench floor            # N = 100, 1,000, 10,000
//!     cargo bench --bench floor -- 1000    # one N
//!
//! Prints per N and slicer: the floor, the pipeline (medians of 101 runs
//! after 5 warm-up runs, interleaved so that both see the same machine) and
//! the ratio.

use std::hint::black_box;
use std::time::Instant;

use cupel::pipeline::Pipeline;
use cupel::placer::Placer;
use cupel::scorer::Scorer;
use cupel::{Budget, Engine, Knapsack, Slicer};

fn floor(contents: &[String], scores: &[f64]) -> u64 {
    let mut h = 0u64;
    for c in contents {
        h ^= xxhash_rust::xxh3::xxh3_64(c.as_bytes());
    }
    let mut s = scores.to_vec();
    s.sort_unstable_by(|a, b| b.total_cmp(a));
    h ^ s[0].to_bits()
}

fn median(t: &mut [f64]) -> f64 {
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[t.len() / 2]
}

fn main() {
    let only: Option<usize> = std::env::args().skip(1).find_map(|a| a.parse().ok());
    println!("N\tslicer\tfloor ms\tpipeline ms\tpipeline / floor");
    for n in [100usize, 1_000, 10_000] {
        if only.is_some_and(|o| o != n) {
            continue;
        }
        let (items, contents) = cupel::testing::realistic(n, 30 + n as u64);
        let total: i64 = (0..n as u32).map(|i| items.view().tokens(i)).sum();
        let budget = Budget::new(total / 4 + 1000, total / 4).unwrap();
        let scores: Vec<f64> = (0..n as u32).map(|i| items.view().score(i)).collect();
        let scorer = Scorer::composite(vec![
            (Scorer::Recency, 2.0),
            (Scorer::Priority, 1.0),
            (Scorer::kind(None).unwrap(), 1.0),
        ])
        .unwrap();
        for (name, slicer) in [
            ("greedy", Slicer::Greedy),
            (
                "knapsack(100)",
                Slicer::Knapsack(Knapsack::new(100).unwrap()),
            ),
        ] {
            let p = Pipeline::new(
                Some(scorer.clone()),
                Engine::new(slicer),
                Some(Placer::Chronological),
            );
            let rounds = if n >= 10_000 { 41 } else { 101 };
            let (mut f, mut q) = (Vec::new(), Vec::new());
            for r in 0..rounds + 5 {
                let start = Instant::now();
                black_box(floor(black_box(&contents), black_box(&scores)));
                let a = start.elapsed().as_secs_f64() * 1e3;
                let start = Instant::now();
                black_box(p.run(black_box(&items), &budget, None).unwrap());
                let b = start.elapsed().as_secs_f64() * 1e3;
                if r >= 5 {
                    f.push(a);
                    q.push(b);
                }
            }
            let (f, q) = (median(&mut f), median(&mut q));
            println!("{n}\t{name}\t{f:.4}\t{q:.4}\t{:.2}x", q / f);
        }
    }
}
