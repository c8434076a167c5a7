//! Sessions (`../shared/abi-session.md`, docs/sessions.md): the three rules
//! checked turn by turn on random conversations (every pipeline rule kept,
//! append keeps the previous output as its prefix, a compaction leaves its
//! slack free), identity (keys, keyless matching, duplicate keys), slack
//! bounds, reset, and a failed run that changes nothing.

mod common;

use common::Rng;
use cupel::budget::Budget;
use cupel::items::{Items, NewItem};
use cupel::pipeline::{Engine, Pipeline, Reason, Report};
use cupel::placer::Placer;
use cupel::scorer::Scorer;
use cupel::session::{Action, Mark, Session};
use cupel::{Knapsack, Slicer};

/// One message of a random conversation.
#[derive(Clone)]
struct Msg {
    key: u64,
    tokens: i64,
    kind: &'static str,
    content: String,
    pinned: bool,
    group: u64,
    variant: Option<i64>,
    volatile: bool,
}

fn conversation(rng: &mut Rng, turns: usize) -> (Vec<Msg>, Vec<usize>, Vec<Vec<Msg>>) {
    let mut key = 0u64;
    let mut msgs = vec![Msg {
        key: 1,
        tokens: 300,
        kind: "SystemPrompt",
        content: "system".into(),
        pinned: true,
        group: 0,
        variant: None,
        volatile: false,
    }];
    key += 1;
    let (mut ends, mut docs) = (Vec::new(), Vec::new());
    let mut group = 0;
    for t in 0..turns {
        let n = 1 + rng.below(4) as usize;
        for k in 0..n {
            key += 1;
            let tool = rng.below(3) == 0;
            if tool {
                group += 1;
            }
            let tokens = 10 + rng.below(if tool { 900 } else { 200 }) as i64;
            msgs.push(Msg {
                key,
                tokens,
                kind: if tool { "ToolOutput" } else { "Message" },
                content: format!("turn {t} message {k}"),
                pinned: false,
                group: if tool { group } else { 0 },
                variant: (tool && rng.below(2) == 0).then_some(5),
                volatile: false,
            });
            if tool {
                key += 1;
                msgs.push(Msg {
                    key,
                    tokens: 20,
                    kind: "ToolCall",
                    content: format!("turn {t} call {k}"),
                    pinned: false,
                    group,
                    variant: None,
                    volatile: false,
                });
            }
        }
        ends.push(msgs.len());
        let d = (0..rng.below(3))
            .map(|j| {
                key += 1;
                Msg {
                    key,
                    tokens: 30 + rng.below(200) as i64,
                    kind: "Document",
                    // Sometimes a copy of a message: deduplication against P.
                    content: match rng.below(5) {
                        0 => format!("turn {} message 0", rng.below(t as u64 + 1)),
                        _ => format!("doc {t} {j}"),
                    },
                    pinned: false,
                    group: 0,
                    variant: None,
                    volatile: true,
                }
            })
            .collect();
        docs.push(d);
    }
    (msgs, ends, docs)
}

fn list(msgs: &[Msg], end: usize, docs: &[Msg], keyed: bool) -> Items {
    let mut items = Items::new();
    for (i, m) in msgs[..end].iter().chain(docs).enumerate() {
        items
            .push(NewItem {
                tokens: m.tokens,
                score: 0.5,
                kind: Some(m.kind),
            })
            .unwrap();
        items.set_content(i, &m.content).unwrap();
        items.set_timestamp(i, i as i64).unwrap();
        items.set_priority(i, (m.key % 7) as i64).unwrap();
        if keyed {
            items.set_key(i, m.key).unwrap();
        }
        items.set_pinned(i, m.pinned).unwrap();
        items.set_group(i, m.group).unwrap();
        items.set_volatile(i, m.volatile).unwrap();
        if let Some(v) = m.variant {
            items.add_variant(i, v, 0.2, Some("[cleared]")).unwrap();
        }
    }
    items
}

fn pipelines() -> Vec<Pipeline> {
    let scorer = Scorer::Composite(vec![(Scorer::Recency, 2.0), (Scorer::Priority, 1.0)]);
    let mut out = Vec::new();
    for slicer in [Slicer::Greedy, Slicer::Knapsack(Knapsack::new(10).unwrap())] {
        for placer in [Some(Placer::Chronological), None] {
            out.push(Pipeline::new(
                Some(scorer.clone()),
                Engine::new(slicer.clone()),
                placer,
            ));
        }
    }
    out
}

/// (key, variant) of each output item, and its added tokens.
type Entry = ((u64, u8, Option<(usize, usize)>), i64, bool);

fn entries(items: &Items, report: &Report) -> Vec<Entry> {
    report
        .included
        .iter()
        .map(|d| {
            let id = (items.key(d.item), d.variant, d.cut);
            (id, d.added_tokens, items.is_volatile(d.item))
        })
        .collect()
}

/// Every rule of one session run, against the previous run's entries.
fn check_run(
    items: &Items,
    out: &[u32],
    report: &Report,
    session: &Session,
    prev: Option<&[Entry]>,
    prev_list: &[u64],
) {
    let n = items.len();
    // Indices distinct, as the report lists them.
    let mut seen = vec![false; n];
    for &i in out {
        assert!(!seen[i as usize], "index {i} twice");
        seen[i as usize] = true;
    }
    assert_eq!(
        out,
        report.included.iter().map(|d| d.item).collect::<Vec<_>>()
    );
    // Every pinned item in; the budget kept.
    for i in 0..n as u32 {
        if items.pinned(i) {
            assert!(seen[i as usize], "pinned item {i} left out");
        }
    }
    let target = report.outcome.effective_target;
    let non_pinned: i64 = report
        .included
        .iter()
        .filter(|d| !items.pinned(d.item))
        .map(|d| d.added_tokens)
        .sum();
    assert!(non_pinned <= target, "{non_pinned} tokens over {target}");
    assert_eq!(report.outcome.selected_tokens, non_pinned);
    // Groups whole.
    for &i in out {
        let g = items.group(i);
        if g != 0 {
            for j in 0..n as u32 {
                if items.group(j) == g {
                    assert!(seen[j as usize], "group {g} split");
                }
            }
        }
    }
    // Volatile items last.
    let first_volatile = out.iter().position(|&i| items.is_volatile(i));
    if let Some(p) = first_volatile {
        assert!(out[p..].iter().all(|&i| items.is_volatile(i)));
    }
    // Every item in the report once.
    assert_eq!(report.included.len() + report.excluded.len(), n);
    // The stable prefix is the common prefix with the previous output.
    let now = entries(items, report);
    let (stable, stable_tokens) = session.stable_prefix();
    let info = report.session.as_ref().expect("a session report");
    assert_eq!(
        (info.stable_items, info.stable_tokens),
        (stable, stable_tokens)
    );
    match (session.last_action(), prev) {
        (Action::First, _) | (_, None) => assert_eq!((stable, stable_tokens), (0, 0)),
        (action, Some(prev)) => {
            let common = prev
                .iter()
                .zip(&now)
                .take_while(|(a, b)| a.0 == b.0)
                .count();
            assert_eq!(stable, common);
            assert_eq!(
                stable_tokens,
                now[..common].iter().map(|e| e.1).sum::<i64>()
            );
            let prev_stay: Vec<_> = prev.iter().filter(|e| !e.2).collect();
            if action == Action::Append {
                // The previous output's non-volatile items lead, in order.
                assert!(prev_stay.len() <= now.len());
                for (a, b) in prev_stay.iter().zip(&now) {
                    assert_eq!(a.0, b.0, "append changed the prefix");
                }
                // What follows them is new or pinned (or volatile).
                for &i in &out[prev_stay.len()..] {
                    let k = items.key(i);
                    assert!(
                        items.pinned(i) || items.is_volatile(i) || !prev_list.contains(&k),
                        "append added item {i}, which was in the last list"
                    );
                }
            } else {
                // A compaction leaves its slack free.
                let room = ((1.0 - session.slack()) * target as f64).floor() as i64;
                let stay: i64 = report
                    .included
                    .iter()
                    .filter(|d| !items.pinned(d.item) && !items.is_volatile(d.item))
                    .map(|d| d.added_tokens)
                    .sum();
                assert!(stay <= room, "compaction kept {stay} over {room}");
            }
        }
    }
    // Breakpoints: ascending, distinct, at most 4, inside the output.
    let b = session.breakpoints();
    assert!(b.len() <= 4);
    assert!(b.windows(2).all(|w| w[0].items < w[1].items));
    for bp in b {
        assert!(bp.items >= 1 && bp.items <= out.len());
        assert_eq!(bp.tokens, now[..bp.items].iter().map(|e| e.1).sum::<i64>());
    }
    if stable > 0 {
        assert!(b.iter().any(|bp| bp.items == stable));
    }
    assert!(b
        .iter()
        .all(|bp| bp.mark != Mark::Stable || bp.items == stable));
}

#[test]
fn every_rule_holds_turn_by_turn_on_random_conversations() {
    let mut rng = Rng(28);
    let (mut appends, mut compactions, mut deferred) = (0, 0, 0);
    for round in 0..24 {
        let (msgs, ends, docs) = conversation(&mut rng, 30);
        let pipeline = pipelines()[round % 4].clone();
        let mut session = Session::new(pipeline.clone());
        session
            .set_slack([0.0, 0.1, 0.2, 0.5][round / 4 % 4])
            .unwrap();
        let budget = Budget::new(3_000, 2_000 + 500 * (round as i64 % 3)).unwrap();
        let (mut prev, mut prev_list) = (None, Vec::new());
        for (t, &end) in ends.iter().enumerate() {
            let items = list(&msgs, end, &docs[t], true);
            let mut report = Report::default();
            let out = session.run(&items, &budget, Some(&mut report)).unwrap();
            check_run(&items, &out, &report, &session, prev.as_deref(), &prev_list);
            // First: the pipeline's output, volatile items moved last.
            if t == 0 {
                let fresh = pipeline.run(&items, &budget, None).unwrap();
                let (stay, vol): (Vec<u32>, Vec<u32>) =
                    fresh.iter().partition(|&&i| !items.is_volatile(i));
                assert_eq!(out, [stay, vol].concat());
                assert_eq!(session.last_action(), Action::First);
            }
            match session.last_action() {
                Action::Append => appends += 1,
                Action::Compact => compactions += 1,
                Action::First => assert_eq!(t, 0),
            }
            deferred += report
                .excluded
                .iter()
                .filter(|d| d.reason == Reason::Deferred)
                .count();
            prev = Some(entries(&items, &report));
            prev_list = (0..items.len() as u32).map(|i| items.key(i)).collect();
        }
    }
    assert!(
        appends > 100 && compactions > 20,
        "{appends} appends, {compactions} compactions"
    );
    assert!(deferred > 0);
}

#[test]
fn keyless_items_match_by_kind_tokens_and_content() {
    let mut rng = Rng(7);
    let (msgs, ends, docs) = conversation(&mut rng, 12);
    let budget = Budget::new(100_000, 100_000).unwrap();
    let mut session = Session::new(pipelines()[0].clone());
    for (t, &end) in ends.iter().enumerate() {
        // No keys: identity is kind, tokens and content; everything fits,
        // so every run after the first appends.
        let items = list(&msgs, end, &docs[t], false);
        session.run(&items, &budget, None).unwrap();
        let expected = if t == 0 {
            Action::First
        } else {
            Action::Append
        };
        assert_eq!(session.last_action(), expected);
    }
    // A changed content is another item: the output changes from it on.
    let end = *ends.last().unwrap();
    let mut changed = msgs.clone();
    changed[3].content.push('!');
    let items = list(&changed, end, &[], false);
    let mut report = Report::default();
    session.run(&items, &budget, Some(&mut report)).unwrap();
    assert_eq!(session.last_action(), Action::Compact);
    assert!(session.stable_prefix().0 <= 3);
}

#[test]
fn duplicate_keys_fail_naming_both_indices_and_change_nothing() {
    let mut rng = Rng(9);
    let (msgs, ends, docs) = conversation(&mut rng, 6);
    let budget = Budget::new(2_000, 1_500).unwrap();
    let mut a = Session::new(pipelines()[1].clone());
    let mut b = a.clone();
    for (t, &end) in ends.iter().enumerate() {
        let items = list(&msgs, end, &docs[t], true);
        if t == 3 {
            let mut bad = list(&msgs, end, &docs[t], true);
            bad.set_key(1, msgs[end - 1].key).unwrap();
            let e = a.run(&bad, &budget, None).unwrap_err().to_string();
            assert!(e.contains(&format!("items 1 and {}", end - 1)), "{e}");
            assert!(e.contains("key"), "{e}");
        }
        let (x, y) = (
            a.run(&items, &budget, None).unwrap(),
            b.run(&items, &budget, None).unwrap(),
        );
        assert_eq!(x, y);
        assert_eq!(a.stable_prefix(), b.stable_prefix());
        assert_eq!(a.last_action(), b.last_action());
        assert_eq!(a.breakpoints(), b.breakpoints());
    }
}

#[test]
fn slack_is_refused_outside_zero_to_one_and_reset_starts_over() {
    let mut s = Session::new(pipelines()[0].clone());
    assert_eq!(s.slack(), cupel::session::DEFAULT_SLACK);
    for bad in [1.0, -0.1, f64::NAN, f64::INFINITY, 1.5] {
        let e = s.set_slack(bad).unwrap_err().to_string();
        assert!(e.contains("fraction"), "{e}");
        assert_eq!(s.slack(), cupel::session::DEFAULT_SLACK);
    }
    s.set_slack(0.0).unwrap();
    s.set_slack(0.999).unwrap();
    let mut rng = Rng(3);
    let (msgs, ends, docs) = conversation(&mut rng, 3);
    let budget = Budget::new(5_000, 5_000).unwrap();
    let items = list(&msgs, ends[2], &docs[2], true);
    s.run(&items, &budget, None).unwrap();
    s.run(&items, &budget, None).unwrap();
    assert_eq!(s.last_action(), Action::Append);
    assert!(s.stable_prefix().0 > 0);
    s.reset();
    assert_eq!(s.last_action(), Action::First);
    assert_eq!(s.stable_prefix(), (0, 0));
    assert!(s.breakpoints().is_empty());
    s.run(&items, &budget, None).unwrap();
    assert_eq!(s.last_action(), Action::First);
    assert_eq!(s.stable_prefix(), (0, 0));
    assert_eq!(s.slack(), 0.999);
}

#[test]
fn report_json_carries_the_session_object() {
    let mut rng = Rng(5);
    let (msgs, ends, docs) = conversation(&mut rng, 4);
    let budget = Budget::new(50_000, 50_000).unwrap();
    let mut s = Session::new(pipelines()[0].clone());
    let mut report = Report::default();
    for (t, &end) in ends.iter().enumerate() {
        let items = list(&msgs, end, &docs[t], true);
        s.run(&items, &budget, Some(&mut report)).unwrap();
        let json: serde_json::Value = serde_json::from_str(&report.json(&items)).unwrap();
        let session = &json["session"];
        let action = if t == 0 { "first" } else { "append" };
        assert_eq!(session["action"], action);
        assert_eq!(session["stablePrefixItems"], s.stable_prefix().0);
        assert_eq!(session["stablePrefixTokens"], s.stable_prefix().1);
        let b = session["breakpoints"].as_array().unwrap();
        assert_eq!(b.len(), s.breakpoints().len());
        assert_eq!(b.last().unwrap()["at"], "end");
    }
    // A plain pipeline run's JSON has none.
    let items = list(&msgs, ends[0], &[], true);
    pipelines()[0]
        .run(&items, &budget, Some(&mut report))
        .unwrap();
    assert!(!report.json(&items).contains("\"session\""));
}
