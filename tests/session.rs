//! Sessions (`../shared/abi-session.md`, docs/sessions.md): the three rules
//! checked turn by turn on random conversations (every pipeline rule kept,
//! append keeps the previous output as its prefix, a compaction leaves its
//! slack free), identity (keys, keyless matching, duplicate keys), slack
//! bounds, reset, and a failed run that changes nothing.

mod common;

use common::Rng;
use cupel::budget::Budget;
use cupel::items::{Items, NewItem, Truncatable};
use cupel::pipeline::{Engine, Pipeline, Reason, Report};
use cupel::placer::Placer;
use cupel::scorer::Scorer;
use cupel::session::{Action, Mark, Session};
use cupel::text::tokenizer::{Keep, Tokenizer};
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
    /// Truncatable (keep the head, at least 5 tokens).
    cut: bool,
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
        cut: false,
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
            // Some long messages may be cut (a log, a file): real text.
            let cut = !tool && tokens > 100 && rng.below(3) == 0;
            let content = match cut {
                true => format!("turn {t} log {k}:{}", " one more line of output".repeat(30)),
                false => format!("turn {t} message {k}"),
            };
            msgs.push(Msg {
                key,
                tokens,
                kind: if tool { "ToolOutput" } else { "Message" },
                content,
                pinned: false,
                group: if tool { group } else { 0 },
                variant: (tool && rng.below(2) == 0).then_some(5),
                volatile: false,
                cut,
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
                    cut: false,
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
                    cut: false,
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
                score: (m.key % 10 + 1) as f64 / 10.0,
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
        if m.cut {
            let cut = Truncatable {
                keep: Keep::Head,
                min_tokens: 5,
            };
            items.set_truncatable(i, Some(cut)).unwrap();
        }
    }
    items
}

fn pipelines() -> Vec<Pipeline> {
    let scorer = Scorer::Composite(
        vec![(Scorer::Recency, 2.0), (Scorer::Priority, 1.0)],
        vec![2.0, 1.0],
    );
    let mut out = Vec::new();
    for slicer in [Slicer::Greedy, Slicer::Knapsack(Knapsack::new(10).unwrap())] {
        for placer in [Some(Placer::Chronological), None] {
            let mut p = Pipeline::new(Some(scorer.clone()), Engine::new(slicer.clone()), placer);
            // Truncatable items fill what is left.
            p.tokenizer = Some(Tokenizer::builtin("o200k_base").unwrap());
            out.push(p);
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
    // The outcome's shrunk entries are the included variants and cuts.
    for d in &report.included {
        let shrunk = report.outcome.shrunk.get(&d.item);
        assert_eq!(shrunk.is_some(), d.variant > 0 || d.cut.is_some());
        if let Some(sh) = shrunk {
            assert_eq!(
                (sh.variant, sh.tokens, sh.cut),
                (d.variant, d.added_tokens, d.cut)
            );
        }
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
    // The last breakpoint ends the non-volatile items.
    let stay = out.iter().take_while(|&&i| !items.is_volatile(i)).count();
    if stay > 0 {
        assert_eq!(
            b.last().map(|bp| (bp.items, bp.mark)),
            Some((stay, Mark::End))
        );
    }
    let pinned_lead = out.iter().take_while(|&&i| items.pinned(i)).count();
    if pinned_lead > 0 && pinned_lead < stay && pinned_lead != stable {
        // Pinned, or Compaction when the last compaction's cut is there.
        assert!(b.iter().any(
            |bp| bp.items == pinned_lead && matches!(bp.mark, Mark::Pinned | Mark::Compaction)
        ));
    }
    assert!(b
        .iter()
        .all(|bp| bp.mark != Mark::Stable || bp.items == stable));
}

#[test]
fn every_rule_holds_turn_by_turn_on_random_conversations() {
    let mut rng = Rng(28);
    let (mut appends, mut compactions, mut deferred) = (0, 0, 0);
    let (mut cuts, mut variants) = (0, 0);
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
            let mut fresh_report = Report::default();
            let fresh = pipeline
                .run(&items, &budget, Some(&mut fresh_report))
                .unwrap();
            // First: the pipeline's output, volatile items moved last, with
            // the pipeline's decisions.
            if t == 0 {
                let (stay, vol): (Vec<u32>, Vec<u32>) =
                    fresh.iter().partition(|&&i| !items.is_volatile(i));
                assert_eq!(out, [stay, vol].concat());
                assert_eq!(session.last_action(), Action::First);
                let mut a = report.included.clone();
                let mut b = fresh_report.included.clone();
                a.sort_by_key(|d| d.item);
                b.sort_by_key(|d| d.item);
                assert_eq!(a, b);
            }
            // Append: every new non-volatile item the pipeline takes is in
            // (unless a copy of one already there).
            if session.last_action() == Action::Append {
                for &i in &fresh {
                    let new = !prev_list.contains(&items.key(i));
                    let copy = out
                        .iter()
                        .any(|&j| j != i && items.content(j) == items.content(i));
                    if new && !items.is_volatile(i) && !copy {
                        assert!(out.contains(&i), "new item {i} left out of an append");
                    }
                }
            }
            cuts += report.included.iter().filter(|d| d.cut.is_some()).count();
            variants += report.included.iter().filter(|d| d.variant > 0).count();
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
    assert!(
        cuts > 50 && variants > 50,
        "{cuts} cuts, {variants} variants"
    );
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

/// A list of `n` plain items of `tokens` tokens each (content "item k",
/// key k + 1, timestamps in order), the pushed score `score`.
fn plain(n: usize, tokens: i64, score: f64) -> Items {
    let mut items = Items::new();
    for k in 0..n {
        items
            .push(NewItem {
                tokens,
                score,
                kind: None,
            })
            .unwrap();
        items.set_content(k, &format!("item {k}")).unwrap();
        items.set_timestamp(k, k as i64).unwrap();
        items.set_key(k, k as u64 + 1).unwrap();
    }
    items
}

fn greedy_given() -> Pipeline {
    Pipeline::new(
        None,
        Engine::new(Slicer::Greedy),
        Some(Placer::Chronological),
    )
}

#[test]
fn an_item_with_neither_key_nor_content_is_volatile() {
    let mut items = plain(3, 10, 0.5);
    items
        .push(NewItem {
            tokens: 10,
            score: 0.9,
            kind: None,
        })
        .unwrap();
    let budget = Budget::new(1_000, 1_000).unwrap();
    let mut s = Session::new(greedy_given());
    // Chronological: item 3 has no timestamp, no key, no content; it goes last.
    assert_eq!(s.run(&items, &budget, None).unwrap(), vec![0, 1, 2, 3]);
    items.set_timestamp(3, -1).unwrap();
    s.reset();
    assert_eq!(s.run(&items, &budget, None).unwrap(), vec![0, 1, 2, 3]);
    // With content it is an item like the others, first in time.
    items.set_content(3, "early").unwrap();
    s.reset();
    assert_eq!(s.run(&items, &budget, None).unwrap(), vec![3, 0, 1, 2]);
}

#[test]
fn an_append_may_fill_the_target_exactly_beside_pinned_items() {
    // A 600-token pinned prompt, a 1,000-token target: 400 for the rest.
    let mut big = Items::new();
    for k in 0..5usize {
        let tokens = if k == 0 { 600 } else { 100 };
        big.push(NewItem {
            tokens,
            score: 0.5,
            kind: None,
        })
        .unwrap();
        big.set_content(k, &format!("item {k}")).unwrap();
        big.set_timestamp(k, k as i64).unwrap();
    }
    big.set_pinned(0, true).unwrap();
    let mut list = big;
    let budget = Budget::new(1_000, 1_000).unwrap();
    let mut s = Session::new(greedy_given());
    s.set_slack(0.0).unwrap();
    let out = s.run(&list, &budget, None).unwrap();
    assert_eq!(out, vec![0, 1, 2, 3, 4]);
    // The same list again: 400 non-pinned tokens, exactly the 400 left.
    let again = s.run(&list, &budget, None).unwrap();
    assert_eq!((s.last_action(), again), (Action::Append, out));
    assert_eq!(s.stable_prefix(), (5, 1_000));
    // One more item the pipeline takes does not fit: a compaction (slack
    // 0: 400 again).
    list.push(NewItem {
        tokens: 100,
        score: 0.9,
        kind: None,
    })
    .unwrap();
    list.set_content(5, "item 5").unwrap();
    list.set_timestamp(5, 5).unwrap();
    let third = s.run(&list, &budget, None).unwrap();
    assert_eq!(s.last_action(), Action::Compact);
    assert_eq!(third.len(), 5);
}

#[test]
fn a_compaction_leaves_exactly_its_slack_and_counts_only_unpinned_volatile_tokens() {
    // 30 items of 100 tokens, all equal; a pinned volatile item of 500.
    let mut items = plain(30, 100, 0.5);
    items
        .push(NewItem {
            tokens: 500,
            score: 0.5,
            kind: None,
        })
        .unwrap();
    items.set_content(30, "the open file").unwrap();
    items.set_pinned(30, true).unwrap();
    items.set_volatile(30, true).unwrap();
    let budget = Budget::new(2_500, 2_500).unwrap();
    let mut s = Session::new(greedy_given());
    s.set_slack(0.5).unwrap();
    let first = s.run(&items, &budget, None).unwrap();
    // T = 2,500 - 500 pinned = 2,000: 20 items, then the volatile one.
    assert_eq!(first.len(), 21);
    assert_eq!(*first.last().unwrap(), 30);
    // Change the first item: P is broken, a compaction to (1 - 0.5) x 2,000.
    items.set_content(0, "item 0, edited").unwrap();
    let mut report = Report::default();
    let out = s.run(&items, &budget, Some(&mut report)).unwrap();
    assert_eq!(s.last_action(), Action::Compact);
    let stay: i64 = out
        .iter()
        .filter(|&&i| !items.pinned(i))
        .map(|&i| items.view().tokens(i))
        .sum();
    assert_eq!(stay, 1_000);
    assert_eq!(*out.last().unwrap(), 30);
    assert_eq!(report.outcome.selected_tokens, 1_000);
    let deferred = report
        .excluded
        .iter()
        .filter(|d| d.reason == Reason::Deferred)
        .count();
    assert_eq!(deferred, 10);
}

#[test]
fn equal_scores_keep_the_longest_prefix() {
    // Every score 0: no prefix costs anything, the longest one is kept.
    let mut items = plain(40, 100, 0.0);
    let budget = Budget::new(2_000, 2_000).unwrap();
    let mut s = Session::new(greedy_given());
    let first = s.run(&items, &budget, None).unwrap();
    assert_eq!(first, (0..20).collect::<Vec<u32>>());
    // Item 25 changes (it was out): P is intact, but nothing new fits.
    // Item 19 changes: P is broken at its end.
    items.set_content(19, "item 19, edited").unwrap();
    s.run(&items, &budget, None).unwrap();
    assert_eq!(s.last_action(), Action::Compact);
    // The cap is 0.8 x 2,000 = 1,600: a prefix of 16 items, all kept.
    assert_eq!(s.stable_prefix(), (16, 1_600));
    assert!(s
        .breakpoints()
        .iter()
        .any(|b| b.items == 16 && b.tokens == 1_600));
}

/// Eight items of 100 tokens (score 0.9) and a 900-token one (score 0.1,
/// oldest) with a 10-token variant `variant`; `cut`: the big one is
/// truncatable instead and has no variant.
fn with_big_item(variant: &str, cut: bool, pinned: bool) -> Items {
    let mut items = plain(8, 100, 0.9);
    items
        .push(NewItem {
            tokens: 900,
            score: 0.1,
            kind: None,
        })
        .unwrap();
    let text = format!("a long log:{}", " one more line of output".repeat(200));
    items.set_content(8, &text).unwrap();
    items.set_timestamp(8, -1).unwrap();
    items.set_key(8, 100).unwrap();
    if cut {
        let t = Truncatable {
            keep: Keep::Head,
            min_tokens: 5,
        };
        items.set_truncatable(8, Some(t)).unwrap();
    } else {
        items.add_variant(8, 10, 0.5, Some(variant)).unwrap();
    }
    items.set_pinned(8, pinned).unwrap();
    items
}

#[test]
fn a_changed_option_breaks_the_prefix_the_same_one_does_not() {
    let budget = Budget::new(1_000, 1_000).unwrap();
    let mut pipeline = greedy_given();
    pipeline.tokenizer = Some(Tokenizer::builtin("o200k_base").unwrap());
    let second = |first: &Items, then: &Items| -> (Action, usize) {
        let mut s = Session::new(pipeline.clone());
        let mut report = Report::default();
        s.run(first, &budget, Some(&mut report)).unwrap();
        // The big item leads, as its variant or cut to the 200 left.
        let lead = report.included[0];
        assert_eq!(lead.item, 8);
        assert!(lead.variant == 1 || lead.cut.is_some());
        s.run(then, &budget, None).unwrap();
        (s.last_action(), s.stable_prefix().0)
    };
    let plain_variant = with_big_item("[cleared]", false, false);
    assert_eq!(second(&plain_variant, &plain_variant), (Action::Append, 9));
    // The variant's text changed: its bytes in the prompt changed.
    let other = with_big_item("[output cleared]", false, false);
    assert_eq!(second(&plain_variant, &other).0, Action::Compact);
    // Now pinned: a pinned item is never shrunk.
    let pinned = with_big_item("[cleared]", false, true);
    assert_eq!(second(&plain_variant, &pinned).0, Action::Compact);
    // Cut, then the same cut again; then no longer truncatable.
    let cut = with_big_item("", true, false);
    assert_eq!(second(&cut, &cut), (Action::Append, 9));
    let mut not_cut = cut.clone();
    not_cut.set_truncatable(8, None).unwrap();
    assert_eq!(second(&cut, &not_cut).0, Action::Compact);
    let mut pinned_cut = cut.clone();
    pinned_cut.set_pinned(8, true).unwrap();
    assert_eq!(second(&cut, &pinned_cut).0, Action::Compact);
}

/// FNV-1a, 64 bits: a stable digest of a run.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// One digest per session run over random conversations (every pipeline of
/// this file, three slacks): the action, the output, the stable prefix, the
/// breakpoints and the report's JSON but its timings.
fn digests() -> Vec<u64> {
    let mut rng = Rng(0x5E55_1011);
    let mut out = Vec::new();
    // And one on the pushed scores (pinned items keep theirs there).
    let mut given = greedy_given();
    given.tokenizer = Some(Tokenizer::builtin("o200k_base").unwrap());
    for (p, pipeline) in pipelines().into_iter().chain([given]).enumerate() {
        for slack in [0.1, 0.2, 0.4] {
            let (msgs, ends, docs) = conversation(&mut rng, 25);
            let mut s = Session::new(pipeline.clone());
            s.set_slack(slack).unwrap();
            let budget = Budget::new(4_000, 1_500 + 500 * p as i64).unwrap();
            for (t, &end) in ends.iter().enumerate() {
                let items = list(&msgs, end, &docs[t], true);
                let mut report = Report::default();
                let placed = s.run(&items, &budget, Some(&mut report)).unwrap();
                let mut json: serde_json::Value =
                    serde_json::from_str(&report.json(&items)).unwrap();
                json["events"] = serde_json::Value::Null;
                // Added after the recording (issue 29), checked elsewhere.
                json.as_object_mut().unwrap().remove("analytics");
                let text = format!(
                    "{:?} {placed:?} {:?} {:?} {json}",
                    s.last_action(),
                    s.stable_prefix(),
                    s.breakpoints()
                );
                out.push(fnv(&text));
            }
        }
    }
    out
}

/// The runs give the results recorded in tests/golden/sessions.txt
/// (`RECORD=<file>` writes them): any change to what a session selects,
/// reports or marks shows here, and must be explained where it is made.
#[test]
fn session_runs_give_their_recorded_results() {
    let got = digests();
    if let Ok(path) = std::env::var("RECORD") {
        let text: String = got.iter().map(|d| format!("{d:016x}\n")).collect();
        std::fs::write(path, text).unwrap();
        return;
    }
    let want: Vec<u64> = include_str!("golden/sessions.txt")
        .lines()
        .map(|l| u64::from_str_radix(l, 16).unwrap())
        .collect();
    assert_eq!(want.len(), got.len());
    for (k, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(w, g, "run {k} differs from its recorded result");
    }
}

/// The fuzz driver's reproducers of five bugs (each fixed), as regressions.
mod found_by_the_fuzz_driver {
    use super::*;
    use cupel::{CountEntry, CountQuota, Scarcity};

    fn push(items: &mut Items, key: u64, tokens: i64, score: f64, kind: &str) -> usize {
        items
            .push(NewItem {
                tokens,
                score,
                kind: Some(kind),
            })
            .unwrap();
        let i = items.len() - 1;
        items.set_key(i, key).unwrap();
        i
    }

    fn pipeline(slicer: Slicer, placer: Option<Placer>) -> Pipeline {
        Pipeline::new(None, Engine::new(slicer), placer)
    }

    #[test]
    fn a_compaction_leads_with_every_item_of_p_its_selection_holds() {
        let mut items = Items::new();
        push(&mut items, 1, 100, 0.05, "Message");
        items.set_timestamp(0, 1000).unwrap();
        push(&mut items, 2, 50, 0.5, "Message");
        items.set_timestamp(1, 2000).unwrap();
        items.set_pinned(1, true).unwrap();
        let budget = Budget::new(1_000, 1_000).unwrap();
        let mut s = Session::new(pipeline(Slicer::Greedy, Some(Placer::Chronological)));
        assert_eq!(s.run(&items, &budget, None).unwrap(), vec![0, 1]);
        push(&mut items, 3, 100, 0.09, "Message");
        items.set_timestamp(2, 500).unwrap();
        push(&mut items, 4, 800, 0.95, "Message");
        items.set_timestamp(3, 4000).unwrap();
        let out = s.run(&items, &budget, None).unwrap();
        assert_eq!(s.last_action(), Action::Compact);
        assert_eq!(&out[..2], &[0, 1]);
        assert_eq!(s.stable_prefix(), (2, 150));
    }

    fn count_pipeline() -> Pipeline {
        let entries = vec![CountEntry {
            kind: "Message".into(),
            require: 1,
            cap: 5,
        }];
        let count = CountQuota::new(Slicer::Greedy, entries, Scarcity::Error).unwrap();
        pipeline(Slicer::CountQuota(count), None)
    }

    #[test]
    fn a_prefix_that_holds_what_a_count_needs_is_passed_over_not_an_error() {
        let mut items = Items::new();
        push(&mut items, 1, 100, 0.1, "Message");
        push(&mut items, 2, 100, 0.05, "Document");
        let budget = Budget::new(1_000, 1_000).unwrap();
        let mut s = Session::new(count_pipeline());
        s.run(&items, &budget, None).unwrap();
        push(&mut items, 3, 850, 0.99, "Document");
        // Forcing item 0 leaves the count no Message: that prefix is passed
        // over; the selection within the slack (800) takes item 0 itself.
        let out = s.run(&items, &budget, None).unwrap();
        assert_eq!(s.last_action(), Action::Compact);
        assert_eq!(out, vec![0, 1]);
    }

    #[test]
    fn a_count_the_slack_cannot_meet_falls_back_to_the_pipeline() {
        // The only Message is volatile: a compaction's selection of the
        // others cannot meet the count, the pipeline's can.
        let mut items = Items::new();
        push(&mut items, 1, 100, 0.1, "Message");
        items.set_content(0, "retrieved").unwrap();
        items.set_volatile(0, true).unwrap();
        push(&mut items, 2, 100, 0.05, "Document");
        let budget = Budget::new(1_000, 1_000).unwrap();
        let p = count_pipeline();
        let mut s = Session::new(p.clone());
        assert_eq!(s.run(&items, &budget, None).unwrap(), vec![1, 0]);
        push(&mut items, 3, 850, 0.99, "Document");
        let fresh = p.run(&items, &budget, None).unwrap();
        let out = s.run(&items, &budget, None).unwrap();
        assert_eq!(s.last_action(), Action::Compact);
        let (stay, vol): (Vec<u32>, Vec<u32>) = fresh.iter().partition(|&&i| !items.is_volatile(i));
        assert_eq!(out, [stay, vol].concat());
    }

    #[test]
    fn an_append_never_splits_a_group() {
        // A tool call too big for this turn; its result arrives next turn.
        let mut items = Items::new();
        push(&mut items, 1, 100, 0.5, "Message");
        push(&mut items, 2, 500, 0.5, "Message");
        items.set_group(1, 7).unwrap();
        let (small, big) = (
            Budget::new(300, 300).unwrap(),
            Budget::new(10_000, 10_000).unwrap(),
        );
        let mut s = Session::new(pipeline(Slicer::Greedy, None));
        assert_eq!(s.run(&items, &small, None).unwrap(), vec![0]);
        push(&mut items, 3, 10, 0.5, "Message");
        items.set_group(2, 7).unwrap();
        let out = s.run(&items, &big, None).unwrap();
        assert_eq!(s.last_action(), Action::Compact);
        assert!(out.contains(&1) && out.contains(&2), "{out:?}");
    }

    #[test]
    fn a_group_formed_among_items_already_sent_is_placed_together() {
        let mut items = Items::new();
        push(&mut items, 1, 100, 0.9, "Message");
        push(&mut items, 2, 100, 0.5, "Message");
        push(&mut items, 3, 100, 0.1, "Message");
        let big = Budget::new(10_000, 10_000).unwrap();
        let mut s = Session::new(pipeline(Slicer::Greedy, None));
        assert_eq!(s.run(&items, &big, None).unwrap(), vec![0, 1, 2]);
        items.set_group(0, 9).unwrap();
        items.set_group(2, 9).unwrap();
        let out = s.run(&items, &big, None).unwrap();
        assert_eq!(s.last_action(), Action::Compact);
        let at = |i: u32| out.iter().position(|&j| j == i).unwrap();
        assert_eq!(at(2), at(0) + 1, "{out:?}");
    }

    #[test]
    fn the_members_of_a_pinned_group_are_pinned() {
        let mut items = Items::new();
        push(&mut items, 1, 50, 0.9, "Message");
        push(&mut items, 2, 50, 0.5, "Message");
        items.set_pinned(0, true).unwrap();
        items.set_group(0, 4).unwrap();
        items.set_group(1, 4).unwrap();
        let tight = Budget::new(100, 100).unwrap();
        let mut s = Session::new(pipeline(Slicer::Greedy, None));
        s.run(&items, &tight, None).unwrap();
        let mut report = Report::default();
        s.run(&items, &tight, Some(&mut report)).unwrap();
        assert_eq!(s.last_action(), Action::Append);
        assert!(report.included.iter().all(|d| d.reason == Reason::Pinned));
    }
}
