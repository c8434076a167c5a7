//! What tracing costs (issue 29): the whole pipeline (2 x recency + 1 x
//! kind, deduplication, GreedySlice, chronological placer) over realistic
//! items (contents of 50-2,000 bytes, one in ten repeated, timestamps) at
//! N = 1,000 and 10,000, untraced and traced at each level with a callback
//! that only counts, in one run. `benches/ab.sh 512774a 5` compares the
//! untraced pipeline with the commit before tracing (benches/plain.rs).
//!
//!     cargo bench --bench trace
//!
//! Prints one line per case: the median of 31 calls (after 3 warm-up calls)
//! and its ratio to the untraced run of the same N.

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use cupel::pipeline::Pipeline;
use cupel::placer::Placer;
use cupel::scorer::Scorer;
use cupel::testing::Rng;
use cupel::trace::{Hook, Level};
use cupel::{Budget, Engine, Items, NewItem, Slicer};

const KINDS: [&str; 4] = ["Message", "Document", "ToolOutput", "Memory"];

fn items(n: usize) -> Items {
    let mut rng = Rng(29);
    let mut items = Items::new();
    for i in 0..n {
        let kind = Some(KINDS[rng.below(4) as usize]);
        let tokens = 1 + rng.below(1000) as i64;
        let score = rng.below(10_000) as f64 / 10_000.0;
        items
            .push(NewItem {
                tokens,
                score,
                kind,
            })
            .unwrap();
        let k = if rng.below(10) == 0 {
            rng.below(n as u64 / 10 + 1)
        } else {
            i as u64
        };
        let len = 50 + (k * 7919 % 1951) as usize;
        let unit = format!("item {k} ");
        let text: String = unit.repeat(len / unit.len() + 1)[..len].to_string();
        items.set_content(i, &text).unwrap();
        items
            .set_timestamp(i, 1_700_000_000_000 + rng.below(1 << 30) as i64)
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
    println!("case\tmedian ms\t/ untraced");
    for n in [1_000usize, 10_000] {
        let list = items(n);
        let budget = Budget::new(128_000, 64_000).unwrap();
        let scorer = Scorer::composite(vec![
            (Scorer::Recency, 2.0),
            (Scorer::kind(None).unwrap(), 1.0),
        ])
        .unwrap();
        let plain = Pipeline::new(
            Some(scorer),
            Engine::new(Slicer::Greedy),
            Some(Placer::Chronological),
        );
        let base = median_ms(|| {
            black_box(plain.run(&list, &budget, None).unwrap());
        });
        println!("pipeline N={n} untraced\t{base:.3}\t1.00");
        for level in [Level::Stages, Level::Exclusions, Level::Full] {
            let events = Arc::new(AtomicUsize::new(0));
            let count = events.clone();
            let mut traced = plain.clone();
            traced.trace = Some(Hook {
                level,
                callback: Arc::new(move |_| {
                    count.fetch_add(1, Ordering::Relaxed);
                }),
            });
            let ms = median_ms(|| {
                black_box(traced.run(&list, &budget, None).unwrap());
            });
            let per_run = events.load(Ordering::Relaxed) / 34;
            println!(
                "pipeline N={n} traced {} ({per_run} events)\t{ms:.3}\t{:.2}",
                level.name(),
                ms / base
            );
        }
    }
}
