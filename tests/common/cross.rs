//! Seeded random pipelines (tests/common/cases.rs, plus random groups) in a
//! plain text form every binding's cross-check driver reads, and what the
//! native library makes of them (through the C ABI). Shared by
//! tests/cross_bindings.rs and tests/python_binding.rs.
//!
//! ```text
//! case
//! budget <max> <target> <reserve> <dedup 0|1> <overflow> <placer c|u>
//! scorer <prefix form: recency | priority | frequency | reflexive | given
//!         | kind -1 | kind N (name weight)*N | tag N (name weight)*N
//!         | composite N (weight scorer)*N | scaled scorer | trust d
//!         | key k v boost | decay curve duration null ref W (age score)*W>
//! slicer greedy | knapsack b | quota N (kind req cap)*N
//!        | countquota N (kind req cap)*N | countknapsack b N (kind req cap)*N
//! items <n>
//! <tokens> <kind> <pinned> <group> <ts|-> <priority|-> <hint|-> <ntags> tag* <nmeta> (k v)* <content as hex>
//! end
//! ```
//!
//! A result line: `P <placed...>|I <index:reason...>|E <index:reason...>`,
//! or `error <status>`.

use std::fmt::Write;

use super::cases;
use super::common::Rng;
use super::pipeline_ref::{ours_raw, Case, ScorerSpec, SlicerSpec, REFERENCE_MS};

fn scorer(s: &ScorerSpec, out: &mut String) {
    match s {
        ScorerSpec::Recency => out.push_str(" recency"),
        ScorerSpec::Priority => out.push_str(" priority"),
        ScorerSpec::Frequency => out.push_str(" frequency"),
        ScorerSpec::Reflexive => out.push_str(" reflexive"),
        ScorerSpec::Kind(None) => out.push_str(" kind -1"),
        ScorerSpec::Kind(Some(w)) | ScorerSpec::Tag(w) => {
            let name = if matches!(s, ScorerSpec::Kind(_)) {
                "kind"
            } else {
                "tag"
            };
            write!(out, " {name} {}", w.len()).unwrap();
            for (k, v) in w {
                write!(out, " {k} {v:?}").unwrap();
            }
        }
        ScorerSpec::Composite(parts) => {
            write!(out, " composite {}", parts.len()).unwrap();
            for (p, w) in parts {
                write!(out, " {w:?}").unwrap();
                scorer(p, out);
            }
        }
        ScorerSpec::Scaled(inner) => {
            out.push_str(" scaled");
            scorer(inner, out);
        }
        ScorerSpec::Trust(d) => write!(out, " trust {d:?}").unwrap(),
        ScorerSpec::Key(k, v, b) => write!(out, " key {k} {v} {b:?}").unwrap(),
        ScorerSpec::Decay(curve, duration, windows, null) => {
            write!(
                out,
                " decay {curve} {duration:?} {null:?} {REFERENCE_MS} {}",
                windows.len()
            )
            .unwrap();
            for (a, sc) in windows {
                write!(out, " {a:?} {sc:?}").unwrap();
            }
        }
    }
}

fn counts(e: &[(String, u32, u32)], out: &mut String) {
    write!(out, " {}", e.len()).unwrap();
    for (k, r, c) in e {
        write!(out, " {k} {r} {c}").unwrap();
    }
}

fn case_text(c: &Case) -> String {
    let mut t = String::from("case\n");
    writeln!(
        t,
        "budget {} {} {} {} {} {}",
        c.max,
        c.target,
        c.reserve,
        c.dedup as u8,
        c.overflow,
        if c.u_shaped { 'u' } else { 'c' }
    )
    .unwrap();
    t.push_str("scorer");
    scorer(&c.scorer, &mut t);
    t.push_str("\nslicer ");
    match &c.slicer {
        SlicerSpec::Greedy => t.push_str("greedy"),
        SlicerSpec::Knapsack(b) => write!(t, "knapsack {b}").unwrap(),
        SlicerSpec::Quota(q) => {
            write!(t, "quota {}", q.len()).unwrap();
            for (k, r, cap) in q {
                write!(t, " {k} {r:?} {cap:?}").unwrap();
            }
        }
        SlicerSpec::CountQuota(e) => {
            t.push_str("countquota");
            counts(e, &mut t);
        }
        SlicerSpec::CountKnapsack(b, e) => {
            write!(t, "countknapsack {b}").unwrap();
            counts(e, &mut t);
        }
    }
    writeln!(t, "\nitems {}", c.items.len()).unwrap();
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    for it in &c.items {
        write!(
            t,
            "{} {} {} {} {} {} {} {}",
            it.tokens,
            it.kind,
            it.pinned as u8,
            it.group,
            opt(it.timestamp.map(|x| x.to_string())),
            opt(it.priority.map(|x| x.to_string())),
            opt(it.hint.map(|x| format!("{x:?}"))),
            it.tags.len()
        )
        .unwrap();
        for tag in &it.tags {
            write!(t, " {tag}").unwrap();
        }
        write!(t, " {}", it.metadata.len()).unwrap();
        for (k, v) in &it.metadata {
            write!(t, " {k} {v}").unwrap();
        }
        let hex: String = it.content.bytes().map(|b| format!("{b:02x}")).collect();
        writeln!(t, " {hex}").unwrap();
    }
    t.push_str("end\n");
    t
}

/// `count` seeded cases as text, and the native result line of each.
pub fn cases(count: u64) -> (String, Vec<String>) {
    let mut rng = Rng(0x14_0000_0000_0001);
    let (mut text, mut expected) = (String::new(), Vec::new());
    for _ in 0..count {
        let mut c = cases::random_case(&mut rng);
        if rng.chance(50) {
            for it in &mut c.items {
                if rng.chance(40) {
                    it.group = 1 + rng.below(4);
                }
            }
        }
        text.push_str(&case_text(&c));
        // SAFETY: ours_raw makes and frees its own handles.
        expected.push(match unsafe { ours_raw(&c) } {
            Ok((_, (placed, inc, exc))) => {
                let list = |ds: &[cupel::ffi::cupel_decision]| -> String {
                    ds.iter()
                        .map(|d| format!(" {}:{}", d.item_index, d.reason))
                        .collect()
                };
                let p: String = placed.iter().map(|i| format!(" {i}")).collect();
                format!("P{p}|I{}|E{}", list(&inc), list(&exc))
            }
            Err(status) => format!("error {}", status as i32),
        });
    }
    (text, expected)
}

/// Compares a driver's output lines with the native ones.
pub fn compare(binding: &str, out: &str, expected: &[String]) {
    let got: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with('P') || l.starts_with("error"))
        .collect();
    assert_eq!(
        got.len(),
        expected.len(),
        "{binding}: {} results for {} cases\n{out}",
        got.len(),
        expected.len()
    );
    for (k, (g, w)) in got.iter().zip(expected).enumerate() {
        assert_eq!(g, w, "{binding}, case {k}");
    }
    let compared = expected.iter().filter(|e| e.starts_with('P')).count();
    assert!(
        compared > expected.len() / 2,
        "{binding}: only {compared} cases ran"
    );
}
