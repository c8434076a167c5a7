//! Sessions against the fresh pipeline on simulated agent conversations
//! (issue 28; `../shared/abi-session.md`, "What it must achieve").
//!
//! `cargo bench --bench session` prints, per pipeline and budget, the three
//! figures of the contract (relevance, cost under prefix-cache pricing,
//! cached-prefix ratio) for the session at the default slack and the fresh
//! pipeline's cached-prefix ratio; `-- --sweep` adds every slack of
//! `SLACKS`; `-- --check` exits non-zero when a figure misses its goal.
//! `SIM_ONLY=greedy|knapsack` runs one slicer, `SIM_SLACK=0.15` one slack,
//! `SIM_SEEDS=11,12` other conversations; `SIM_TRACE=1` prints a line a
//! turn (seed, turn, action, relevance, uncached tokens, tokens sent) to
//! stderr.
//!
//! A conversation (seeded): a pinned system prompt and tool definitions;
//! 40-200 turns, each a user message, 0-3 tool calls each grouped with its
//! result (lognormal sizes, a placeholder variant for every result), an
//! assistant reply, and 3 volatile retrieved documents. Every item has a
//! key; the list grows by the turn and is handed over whole each turn.

use cupel::budget::Budget;
use cupel::items::{Items, NewItem};
use cupel::pipeline::{Engine, Pipeline, Report};
use cupel::placer::Placer;
use cupel::scorer::{Scorer, DEFAULT_KIND_WEIGHTS};
use cupel::session::{Session, DEFAULT_SLACK};
use cupel::testing::Rng;
use cupel::{Knapsack, Slicer};

const SLACKS: [f64; 6] = [0.05, 0.1, 0.15, 0.2, 0.3, 0.4];
const BUDGETS: [i64; 3] = [16_000, 32_000, 64_000];
const SEEDS: [u64; 4] = [1, 2, 3, 4];

/// The seeds of the run: `SIM_SEEDS=5,6,7` or [`SEEDS`].
fn seeds() -> Vec<u64> {
    match std::env::var("SIM_SEEDS") {
        Ok(v) => v.split(',').map(|x| x.trim().parse().unwrap()).collect(),
        Err(_) => SEEDS.to_vec(),
    }
}
/// Per token: uncached input (a cache write), cached input.
const UNCACHED: f64 = 1.25;
const CACHED: f64 = 0.1;

/// A uniform number in [0, 1).
fn unit(rng: &mut Rng) -> f64 {
    (rng.next() >> 11) as f64 / (1u64 << 53) as f64
}

/// Lognormal with the given median and sigma, clamped to [lo, hi].
fn lognormal(rng: &mut Rng, median: f64, sigma: f64, lo: i64, hi: i64) -> i64 {
    let (u1, u2) = (unit(rng).max(1e-12), unit(rng));
    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    ((median * (sigma * z).exp()) as i64).clamp(lo, hi)
}

/// One candidate of the conversation.
#[derive(Clone)]
struct Msg {
    key: u64,
    tokens: i64,
    kind: &'static str,
    content: String,
    timestamp: i64,
    pinned: bool,
    group: u64,
    /// A placeholder variant (tokens), for tool results.
    placeholder: Option<i64>,
}

/// A conversation: the history after each turn is `history[..ends[t]]`,
/// and turn t's volatile documents are `docs[t]`.
struct Trace {
    history: Vec<Msg>,
    ends: Vec<usize>,
    docs: Vec<Vec<Msg>>,
}

fn trace(seed: u64) -> Trace {
    let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
    let turns = 40 + rng.below(161) as usize;
    let mut key = 0u64;
    let mut next_key = || {
        key += 1;
        key
    };
    let mut history = vec![
        Msg {
            key: next_key(),
            tokens: 1_200,
            kind: "SystemPrompt",
            content: "system prompt".into(),
            timestamp: 0,
            pinned: true,
            group: 0,
            placeholder: None,
        },
        Msg {
            key: next_key(),
            tokens: 2_500,
            kind: "SystemPrompt",
            content: "tool definitions".into(),
            timestamp: 1,
            pinned: true,
            group: 0,
            placeholder: None,
        },
    ];
    let (mut ends, mut docs) = (Vec::new(), Vec::new());
    let mut group = 0u64;
    for t in 0..turns {
        let ts = (t as i64 + 1) * 1_000;
        let mut msg = |tokens: i64, kind: &'static str, what: &str, k: i64, group: u64| Msg {
            key: next_key(),
            tokens,
            kind,
            content: format!("turn {t} {what} {k}"),
            timestamp: ts + k,
            pinned: false,
            group,
            placeholder: None,
        };
        history.push(msg(
            lognormal(&mut rng, 80.0, 0.8, 5, 2_000),
            "Message",
            "user",
            0,
            0,
        ));
        let calls = rng.below(4) as i64;
        for c in 0..calls {
            group += 1;
            let call = lognormal(&mut rng, 60.0, 0.5, 10, 400);
            let result = lognormal(&mut rng, 600.0, 1.1, 20, 12_000);
            history.push(msg(call, "ToolCall", "call", 1 + 2 * c, group));
            let mut r = msg(result, "ToolOutput", "result", 2 + 2 * c, group);
            r.placeholder = Some(12);
            history.push(r);
        }
        let reply = lognormal(&mut rng, 250.0, 0.7, 10, 3_000);
        history.push(msg(reply, "Message", "assistant", 100, 0));
        ends.push(history.len());
        let turn_docs = (0..3)
            .map(|d| {
                let doc = rng.below(50);
                let mut m = msg(
                    lognormal(&mut rng, 400.0, 0.5, 50, 2_000),
                    "Document",
                    "doc",
                    d,
                    0,
                );
                m.content = format!("document {doc} {}", m.tokens);
                m
            })
            .collect();
        docs.push(turn_docs);
    }
    Trace {
        history,
        ends,
        docs,
    }
}

/// The list a host hands over at turn `t`: the whole history, then the
/// turn's volatile documents.
fn list(trace: &Trace, t: usize) -> Items {
    let mut items = Items::new();
    let all = trace.history[..trace.ends[t]].iter().chain(&trace.docs[t]);
    let volatile_from = trace.ends[t];
    for (i, m) in all.enumerate() {
        items
            .push(NewItem {
                tokens: m.tokens,
                score: 0.5,
                kind: Some(m.kind),
            })
            .unwrap();
        items.set_content(i, &m.content).unwrap();
        items.set_timestamp(i, m.timestamp).unwrap();
        items.set_key(i, m.key).unwrap();
        if m.pinned {
            items.set_pinned(i, true).unwrap();
        }
        if m.group != 0 {
            items.set_group(i, m.group).unwrap();
        }
        if let Some(p) = m.placeholder {
            let text = format!("[output cleared: {} tokens]", m.tokens);
            items.add_variant(i, p, 0.1, Some(&text)).unwrap();
        }
        if i >= volatile_from {
            items.set_volatile(i, true).unwrap();
        }
    }
    items
}

fn pipeline(slicer: Slicer) -> Pipeline {
    let kinds = DEFAULT_KIND_WEIGHTS
        .iter()
        .map(|&(k, w)| (k.to_string(), w))
        .chain([("ToolCall".to_string(), 0.6)])
        .collect();
    let scorer = Scorer::Composite(
        vec![(Scorer::Recency, 2.0), (Scorer::Kind(kinds), 1.0)],
        vec![2.0, 1.0],
    );
    Pipeline::new(
        Some(scorer),
        Engine::new(slicer),
        Some(Placer::Chronological),
    )
}

/// An output item: (key, variant), with the tokens it adds.
type Sent = Vec<((u64, u8), i64)>;

fn sent(items: &Items, report: &Report) -> Sent {
    report
        .included
        .iter()
        .map(|d| ((items.key(d.item), d.variant), d.added_tokens))
        .collect()
}

fn relevance(items: &Items, report: &Report) -> f64 {
    report
        .included
        .iter()
        .filter(|d| !items.pinned(d.item))
        .map(|d| d.score)
        .sum()
}

fn cached(prev: &Sent, now: &Sent) -> i64 {
    prev.iter()
        .zip(now)
        .take_while(|(a, b)| a.0 == b.0)
        .map(|(_, b)| b.1)
        .sum()
}

#[derive(Default, Clone, Copy)]
struct Figures {
    relevance: f64,
    cost: f64,
    ratio: f64,
    fresh_ratio: f64,
    compactions: usize,
    turns: usize,
    /// Session run time over the fresh run's, summed over every turn.
    time: f64,
}

/// Session against fresh over every seed, at one pipeline, budget, slack.
fn simulate(slicer: &Slicer, budget: i64, slack: f64) -> Figures {
    let b = Budget::new(budget, budget).unwrap();
    let (mut rel_sum, mut turns) = (0.0, 0usize);
    let (mut cost_s, mut cost_f) = (0.0, 0.0);
    let (mut sent_s, mut cached_s, mut sent_f, mut cached_f) = (0i64, 0i64, 0i64, 0i64);
    let mut compactions = 0;
    let (mut time_s, mut time_f) = (0.0, 0.0);
    for seed in seeds() {
        let tr = trace(seed);
        let p = pipeline(slicer.clone());
        let mut session = Session::new(p.clone());
        session.set_slack(slack).unwrap();
        let mut prev_f: Sent = Vec::new();
        for t in 0..tr.ends.len() {
            let items = list(&tr, t);
            let mut rf = Report::default();
            let clock = std::time::Instant::now();
            p.run(&items, &b, Some(&mut rf)).unwrap();
            time_f += clock.elapsed().as_secs_f64();
            let mut rs = Report::default();
            let clock = std::time::Instant::now();
            session.run(&items, &b, Some(&mut rs)).unwrap();
            time_s += clock.elapsed().as_secs_f64();
            if session.last_action() == cupel::session::Action::Compact {
                compactions += 1;
            }
            let now_f = sent(&items, &rf);
            let now_s = sent(&items, &rs);
            let (tf, ts): (i64, i64) = (
                now_f.iter().map(|e| e.1).sum(),
                now_s.iter().map(|e| e.1).sum(),
            );
            let cf = cached(&prev_f, &now_f);
            let cs = session.stable_prefix().1;
            cost_f += UNCACHED * (tf - cf) as f64 + CACHED * cf as f64;
            cost_s += UNCACHED * (ts - cs) as f64 + CACHED * cs as f64;
            sent_f += tf;
            sent_s += ts;
            cached_f += cf;
            cached_s += cs;
            let (rf_, rs_) = (relevance(&items, &rf), relevance(&items, &rs));
            if rf_ > 0.0 {
                rel_sum += rs_ / rf_;
                turns += 1;
                if std::env::var("SIM_TRACE").is_ok() {
                    eprintln!(
                        "trace {seed} {t} {:?} {:.3} {} {}",
                        session.last_action(),
                        rs_ / rf_,
                        ts - cs,
                        ts
                    );
                }
            }
            prev_f = now_f;
        }
    }
    Figures {
        relevance: rel_sum / turns as f64,
        cost: cost_s / cost_f,
        ratio: cached_s as f64 / sent_s as f64,
        fresh_ratio: cached_f as f64 / sent_f as f64,
        compactions,
        turns,
        time: time_s / time_f,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sweep = args.iter().any(|a| a == "--sweep");
    let check = args.iter().any(|a| a == "--check");
    let slicers = [
        ("greedy", Slicer::Greedy),
        ("knapsack", Slicer::Knapsack(Knapsack::new(100).unwrap())),
    ];
    let slacks: Vec<f64> = match sweep {
        true => SLACKS.to_vec(),
        false => match std::env::var("SIM_SLACK") {
            Ok(v) => vec![v.parse().unwrap()],
            Err(_) => vec![DEFAULT_SLACK],
        },
    };
    let sizes: Vec<usize> = seeds().iter().map(|&s| trace(s).ends.len()).collect();
    println!("conversations: seeds {:?}, turns {sizes:?}", seeds());
    println!(
        "| pipeline | budget | slack | relevance | cost | cached-prefix ratio | fresh ratio | compactions / turns | time, session / fresh |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut missed = 0;
    for slack in slacks {
        for (name, slicer) in &slicers {
            if std::env::var("SIM_ONLY").is_ok_and(|o| o != *name) {
                continue;
            }
            for budget in BUDGETS {
                let f = simulate(slicer, budget, slack);
                let ok = f.relevance >= 0.95 && f.cost <= 0.30 && f.ratio >= 0.85;
                if slack == DEFAULT_SLACK && !ok {
                    missed += 1;
                }
                println!(
                    "| {name} | {}k | {slack:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} / {} | {:.1}x |{}",
                    budget / 1000,
                    f.relevance,
                    f.cost,
                    f.ratio,
                    f.fresh_ratio,
                    f.compactions,
                    f.turns,
                    f.time,
                    if ok { "" } else { " missed" }
                );
            }
        }
    }
    if check && missed > 0 {
        eprintln!("{missed} setting(s) miss a goal at the default slack");
        std::process::exit(1);
    }
}
