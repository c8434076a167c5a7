//! Seeded random pipelines (items with every attribute, every scorer,
//! slicer, placer, overflow strategy and deduplication setting) within the
//! bounds tests/differential_pipeline.rs sets for comparing with the cupel
//! crate. Shared by that test and tests/groups.rs.

use super::common::Rng;
use super::pipeline_ref::*;

pub const KINDS: [&str; 5] = [
    "Message",
    "Document",
    "ToolOutput",
    "Memory",
    "SystemPrompt",
];
const TAGS: [&str; 5] = ["auth", "AUTH", "db", "ui", "perf"];
const CONTENTS: usize = 12;

pub fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
    from[rng.below(from.len() as u64) as usize]
}

pub fn random_scorer(rng: &mut Rng, depth: u32) -> ScorerSpec {
    let n = if depth > 1 { 10 } else { 12 };
    match rng.below(n) {
        0 => ScorerSpec::Recency,
        1 => ScorerSpec::Priority,
        2 => ScorerSpec::Kind(if rng.chance(50) {
            None
        } else {
            Some(
                KINDS[..1 + rng.below(4) as usize]
                    .iter()
                    .map(|k| (k.to_string(), rng.below(20) as f64 / 10.0))
                    .collect(),
            )
        }),
        3 => {
            let mut w = Vec::new();
            for t in ["auth", "db", "perf"] {
                if rng.chance(70) {
                    w.push((t.to_string(), rng.below(5) as f64));
                }
            }
            ScorerSpec::Tag(w)
        }
        4 => ScorerSpec::Frequency,
        5 => ScorerSpec::Reflexive,
        6 => ScorerSpec::Trust(rng.below(11) as f64 / 10.0),
        7 => ScorerSpec::Key(
            "cupel:priority".into(),
            "high".into(),
            0.5 + rng.below(4) as f64 / 2.0,
        ),
        8 | 9 => {
            let curve = rng.below(3) as u8;
            let windows = vec![(3600.0, 0.9), (86_400.0, 0.5), (259_200.0, 0.1)];
            let duration = [3600.0, 86_400.0, 604_800.0][rng.below(3) as usize];
            ScorerSpec::Decay(curve, duration, windows, rng.below(11) as f64 / 10.0)
        }
        10 => ScorerSpec::Composite(
            (0..2 + rng.below(2))
                .map(|_| {
                    (
                        random_scorer(rng, depth + 1),
                        0.5 + rng.below(6) as f64 / 2.0,
                    )
                })
                .collect(),
        ),
        _ => ScorerSpec::Scaled(Box::new(random_scorer(rng, depth + 1))),
    }
}

pub fn random_slicer(rng: &mut Rng) -> SlicerSpec {
    let counts = |rng: &mut Rng| -> Vec<(String, u32, u32)> {
        let mut e = Vec::new();
        for k in KINDS {
            if rng.chance(40) {
                let req = rng.below(3) as u32;
                e.push((k.to_string(), req, req + 1 + rng.below(3) as u32));
            }
        }
        e
    };
    match rng.below(5) {
        0 => SlicerSpec::Greedy,
        1 => SlicerSpec::Knapsack([1, 10, 100][rng.below(3) as usize]),
        2 => {
            let mut left = 100.0;
            let mut q = Vec::new();
            for k in KINDS {
                if !rng.chance(40) {
                    continue;
                }
                let req = (rng.below(30) as f64).min(left);
                left -= req;
                q.push((
                    k.to_string(),
                    req,
                    (req + 10.0 + rng.below(60) as f64).min(100.0),
                ));
            }
            SlicerSpec::Quota(q)
        }
        3 => SlicerSpec::CountQuota(counts(rng)),
        _ => SlicerSpec::CountKnapsack([1, 10, 100][rng.below(3) as usize], counts(rng)),
    }
}

pub fn random_case(rng: &mut Rng) -> Case {
    let n = rng.below(30) as usize;
    let dedup = rng.chance(70);
    let items = (0..n)
        .map(|i| Item {
            // Departure 1: repeated contents only where deduplication runs.
            content: if dedup {
                format!("content {}", rng.below(CONTENTS as u64))
            } else {
                format!("unique {i}")
            },
            tokens: match rng.below(20) {
                0 => 0,
                1 => -(1 + rng.below(50) as i64),
                _ => 1 + rng.below(400) as i64,
            },
            kind: pick(rng, &KINDS).to_string(),
            timestamp: rng
                .chance(75)
                .then(|| REFERENCE_MS - rng.below(10 * 86_400_000) as i64 + 3_600_000),
            priority: rng.chance(60).then(|| rng.below(8) as i64),
            pinned: rng.chance(6),
            hint: rng.chance(60).then(|| rng.below(14) as f64 / 10.0 - 0.2),
            tags: (0..rng.below(3))
                .map(|_| pick(rng, &TAGS).to_string())
                .collect(),
            group: 0,
            metadata: {
                let mut m = Vec::new();
                if rng.chance(50) {
                    let v = ["0.2", "0.9", "1.5", "high", "NaN"][rng.below(5) as usize];
                    m.push(("cupel:trust".to_string(), v.to_string()));
                }
                if rng.chance(40) {
                    let v = ["high", "normal"][rng.below(2) as usize];
                    m.push(("cupel:priority".to_string(), v.to_string()));
                }
                m
            },
        })
        .collect();
    let max = 200 + rng.below(3000) as i64;
    let target = rng.below(max as u64 + 1) as i64;
    let slicer = random_slicer(rng);
    let overflow = match slicer {
        // Departure 2: no truncation of the count slicers' merged lists.
        SlicerSpec::CountQuota(_) | SlicerSpec::CountKnapsack(..) => [0, 2][rng.below(2) as usize],
        _ => rng.below(3) as i32,
    };
    Case {
        items,
        scorer: random_scorer(rng, 0),
        slicer,
        u_shaped: rng.chance(50),
        dedup,
        overflow,
        max,
        target,
        reserve: if rng.chance(30) {
            rng.below(max as u64 / 4 + 1) as i64
        } else {
            0
        },
    }
}
