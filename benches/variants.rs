//! Items that shrink (issue 27): what variants and truncation buy, and what
//! they cost, in one run. Prints two Markdown tables:
//!
//! 1. The score kept (the sum of the included items' scores, each the share
//!    its variant or cut keeps) on the bundled data at budgets from 10 % to
//!    90 % of its tokens: examples/data/rag_candidates.csv with and
//!    without variants (a quarter-length summary worth half, a 12-token
//!    placeholder worth a twentieth, for every document, tool output and
//!    memory), and the session of examples/data/session plain, with a
//!    placeholder for each tool output, and with its documents truncatable
//!    too.
//! 2. The time of GreedySlice and KnapsackSlice on seeded lists with two
//!    variants per item against the same lists without (goal: at most 2x);
//!    one list's second variant is a 12-token placeholder on items of 50
//!    tokens or more, so nearly every placeholder fits what the pass leaves.
//!
//! ```text
//! cargo bench --bench variants
//! cargo bench --bench variants -- cost knapsack   # one table, some cases
//! ```
//!
//! `benches/plain.rs` with `benches/ab.sh` times variant-free lists against
//! the commit before variants.

use std::hint::black_box;
use std::time::Instant;

use cupel::items::Truncatable;
use cupel::pipeline::{Pipeline, Report};
use cupel::testing::Rng;
use cupel::text::tokenizer::{Keep, Tokenizer};
use cupel::{Budget, Engine, Items, Knapsack, NewItem, Slicer};

fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The rag candidates: (kind, tokens, score, pinned, group).
fn rag_rows() -> Vec<(String, i64, f64, bool, u64)> {
    let text = std::fs::read_to_string(root().join("examples/data/rag_candidates.csv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[4] == "1",
                f[5].parse().unwrap(),
            )
        })
        .collect()
}

fn rag(variants: bool) -> Items {
    let mut items = Items::new();
    for (i, (kind, tokens, score, pinned, group)) in rag_rows().into_iter().enumerate() {
        let shrinks = ["Document", "ToolOutput", "Memory"].contains(&kind.as_str());
        let kind = Some(kind.as_str());
        items
            .push(NewItem {
                tokens,
                score,
                kind,
            })
            .unwrap();
        items.set_pinned(i, pinned).unwrap();
        items.set_group(i, group).unwrap();
        if variants && shrinks && tokens > 48 {
            items.add_variant(i, (tokens + 3) / 4, 0.5, None).unwrap();
            items.add_variant(i, 12, 0.05, None).unwrap();
        }
    }
    items
}

/// The session's texts: (kind, file, score, pinned, group, text).
fn session_rows() -> Vec<(String, String, f64, bool, u64, String)> {
    let dir = root().join("examples/data/session");
    let manifest = std::fs::read_to_string(dir.join("manifest.csv")).unwrap();
    manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("kind,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let text = std::fs::read_to_string(dir.join(f[1])).unwrap();
            let (score, pinned, group) =
                (f[2].parse().unwrap(), f[4] == "1", f[5].parse().unwrap());
            (
                f[0].to_string(),
                f[1].to_string(),
                score,
                pinned,
                group,
                text,
            )
        })
        .collect()
}

/// The session: plain (0), with placeholders (1), and documents truncatable too (2).
fn session(tok: &Tokenizer, level: u8) -> Items {
    let mut items = Items::new();
    for (i, (kind, file, score, pinned, group, text)) in session_rows().into_iter().enumerate() {
        let tokens = tok.count(&text) as i64;
        let kind_ref = Some(kind.as_str());
        items
            .push(NewItem {
                tokens,
                score,
                kind: kind_ref,
            })
            .unwrap();
        items.set_content(i, &text).unwrap();
        items.set_pinned(i, pinned).unwrap();
        items.set_group(i, group).unwrap();
        if level >= 1 && kind == "ToolOutput" {
            let note = format!("[{file} cleared: {tokens} tokens]");
            let t = tok.count(&note) as i64;
            items.add_variant(i, t, 0.2, Some(&note)).unwrap();
        }
        if level >= 2 && kind == "Document" {
            let cut = Truncatable {
                keep: Keep::Head,
                min_tokens: 30,
            };
            items.set_truncatable(i, Some(cut)).unwrap();
        }
    }
    items
}

fn total_tokens(items: &Items) -> i64 {
    (0..items.len() as u32)
        .map(|i| items.view().tokens(i).max(0))
        .sum()
}

/// The score kept by a run: the included items' scores.
fn kept(items: &Items, slicer: Slicer, budget: i64, tok: Option<&Tokenizer>) -> f64 {
    let mut p = Pipeline::new(None, Engine::new(slicer), None);
    p.deduplication = false;
    p.tokenizer = tok.cloned();
    let mut report = Report::default();
    p.run(
        items,
        &Budget::new(budget, budget).unwrap(),
        Some(&mut report),
    )
    .unwrap();
    report.included.iter().map(|d| d.score).sum()
}

fn score_table() {
    let tok = Tokenizer::builtin("o200k_base").unwrap();
    let (plain, shrinking) = (rag(false), rag(true));
    let sessions = [session(&tok, 0), session(&tok, 1), session(&tok, 2)];
    let (rag_total, session_total) = (total_tokens(&plain), total_tokens(&sessions[0]));
    println!(
        "Score kept (sum of the included items' scores) at a budget of p % of all tokens\n\
         (rag candidates: {rag_total} tokens; session: {session_total} tokens)\n"
    );
    println!(
        "| budget | rag, greedy: plain | with variants | rag, knapsack(10): plain | with variants \
         | session, greedy: plain | placeholders | + documents cut |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let knapsack = || Slicer::Knapsack(Knapsack::new(10).unwrap());
    for p in (10..=90).step_by(10) {
        let b = rag_total * p / 100;
        let s = session_total * p / 100;
        println!(
            "| {p} % | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            kept(&plain, Slicer::Greedy, b, None),
            kept(&shrinking, Slicer::Greedy, b, None),
            kept(&plain, knapsack(), b, None),
            kept(&shrinking, knapsack(), b, None),
            kept(&sessions[0], Slicer::Greedy, s, None),
            kept(&sessions[1], Slicer::Greedy, s, None),
            kept(&sessions[2], Slicer::Greedy, s, Some(&tok)),
        );
    }
    // The session's budgets of 10 % and up all fit everything but the big
    // log; below them is where cutting shows.
    println!("\nThe session at small budgets (tokens), greedy\n");
    println!("| budget | plain | placeholders | + documents cut |");
    println!("|---|---|---|---|");
    for b in [250, 400, 550, 700, 850] {
        println!(
            "| {b} | {:.2} | {:.2} | {:.2} |",
            kept(&sessions[0], Slicer::Greedy, b, None),
            kept(&sessions[1], Slicer::Greedy, b, None),
            kept(&sessions[2], Slicer::Greedy, b, Some(&tok)),
        );
    }
}

/// The variants of a seeded list.
#[derive(Clone, Copy, PartialEq)]
enum Variants {
    /// A third-length summary worth half, a tenth-length digest worth 0.15.
    Two,
    /// A third-length summary worth half and a 12-token placeholder worth
    /// a twentieth, on items of 50 tokens or more: nearly every item's
    /// placeholder fits what the pass leaves.
    Placeholder,
}

/// `n` seeded items of 1 to `max_tokens` tokens (50 and up for
/// placeholders), with `variants` when `with`.
fn seeded(n: usize, max_tokens: u64, variants: Variants, with: bool) -> Items {
    let mut rng = Rng(27);
    let mut items = Items::new();
    let least = if variants == Variants::Placeholder {
        50
    } else {
        1
    };
    for i in 0..n {
        let tokens = least + rng.below(max_tokens + 1 - least as u64) as i64;
        let score = rng.below(10_000) as f64 / 10_000.0;
        items
            .push(NewItem {
                tokens,
                score,
                kind: None,
            })
            .unwrap();
        if !with {
            continue;
        }
        items.add_variant(i, (tokens + 2) / 3, 0.5, None).unwrap();
        match variants {
            Variants::Two => items.add_variant(i, (tokens + 9) / 10, 0.15, None),
            Variants::Placeholder => items.add_variant(i, 12, 0.05, None),
        }
        .unwrap();
    }
    items
}

fn median_ms(mut f: impl FnMut()) -> f64 {
    for _ in 0..3 {
        f();
    }
    let mut t: Vec<f64> = (0..21)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[t.len() / 2]
}

/// The medians of 31 calls of `a` and of `b`, the two alternating, after
/// a second of both alternating: the same machine state for both (a list's
/// first calls run slower while its memory warms, and the plain call's
/// time moves with the allocator's state).
fn medians_paired(mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    let warm = Instant::now();
    while warm.elapsed().as_secs_f64() < 1.0 {
        a();
        b();
    }
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        start.elapsed().as_secs_f64() * 1e3
    };
    let (mut ta, mut tb): (Vec<f64>, Vec<f64>) =
        (0..31).map(|_| (time(&mut a), time(&mut b))).unzip();
    ta.sort_by(f64::total_cmp);
    tb.sort_by(f64::total_cmp);
    (ta[15], tb[15])
}

/// `paired`: each case's two calls timed alternating ([`medians_paired`]),
/// else one after the other ([`median_ms`]).
fn cost_table(only: Option<&str>, paired: bool) {
    match paired {
        false => println!("\nTime of one slice call (median of 21), two variants per item against none\n"),
        true => println!("\nTime of one slice call (median of 31, the two alternating after a second of both), two variants per item against none\n"),
    }
    println!("| case | no variants ms | 2 variants per item ms | with / without |");
    println!("|---|---|---|---|");
    use Variants::{Placeholder, Two};
    let cases: [(&str, usize, u64, i64, Slicer, Variants); 5] = [
        ("greedy N=10000", 10_000, 1000, 128_000, Slicer::Greedy, Two),
        (
            "greedy N=100000",
            100_000,
            1000,
            128_000,
            Slicer::Greedy,
            Two,
        ),
        (
            "greedy N=100000, placeholders",
            100_000,
            1049,
            128_000,
            Slicer::Greedy,
            Placeholder,
        ),
        (
            "knapsack N=7800 (bucket 100)",
            7_800,
            1000,
            128_000,
            Slicer::Knapsack(Knapsack::new(100).unwrap()),
            Two,
        ),
        (
            "knapsack N=2000 (bucket 1)",
            2_000,
            400,
            16_000,
            Slicer::Knapsack(Knapsack::new(1).unwrap()),
            Two,
        ),
    ];
    for (name, n, max_tokens, target, slicer, kind) in cases {
        if only.is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let budget = Budget::new(target, target).unwrap();
        let engine = Engine::new(slicer);
        let without = seeded(n, max_tokens, kind, false);
        let with = seeded(n, max_tokens, kind, true);
        let without = || {
            black_box(engine.slice(&without, &budget, 0).unwrap());
        };
        let with = || {
            black_box(engine.slice(&with, &budget, 0).unwrap());
        };
        let (a, b) = match paired {
            false => (median_ms(without), median_ms(with)),
            true => medians_paired(without, with),
        };
        println!("| {name} | {a:.3} | {b:.3} | {:.2}x |", b / a);
    }
}

fn main() {
    let only = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    if only.as_deref().is_none_or(|o| "score".contains(o)) {
        score_table();
    }
    if only.as_deref().is_none_or(|o| "cost".contains(o)) {
        // `-- cost knapsack`: only the cases whose name contains
        // "knapsack"; `-- cost --paired`: the calls timed alternating.
        let case = std::env::args().nth(2).filter(|a| !a.starts_with('-'));
        let paired = std::env::args().any(|a| a == "--paired");
        cost_table(case.as_deref(), paired);
    }
}
