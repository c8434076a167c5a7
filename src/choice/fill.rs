//! Truncatable items (`../shared/abi-text.md`, "Items that shrink instead of
//! vanish"): after the slicer, what it left is filled with truncatable
//! items cut down to fit.
//!
//! While the tokens left (the effective target minus the tokens of
//! everything included) reach the `min_tokens` of a truncatable candidate
//! with no option chosen, the one among them with the highest score per
//! token (of its full tokens; ties: push order) is cut by the tokenizer
//! with `max_tokens` = the tokens left and its `keep`, and included if
//! what is kept still counts at least `min_tokens` (else it is passed
//! over). The tokens left only shrink, so one pass in that order does it:
//! a candidate whose `min_tokens` is over what is left at its turn would
//! be over it at any later turn.
//!
//! Not cut: a pinned item (always included as pushed), a member of a
//! keep-together group (a group is taken whole), and an item a count cap
//! excluded.

use crate::error::{invalid, Result};
use crate::items::{Items, View};
use crate::pipeline::slice::{Outcome, Shrunk};
use crate::text::tokenizer::Tokenizer;

/// The run's precondition: every truncatable item has content, and the
/// pipeline a tokenizer when any item is truncatable. The error names the
/// first item that fails it.
pub fn check(items: &Items, tokenizer: Option<&Tokenizer>) -> Result<()> {
    if !items.has_truncatable() {
        return Ok(());
    }
    for i in 0..items.len() as u32 {
        if items.truncatable(i).is_none() {
            continue;
        }
        if items.content(i).is_none() {
            return invalid!(
                "item {i} is truncatable but has no content to cut (cupel_items_set_content)"
            );
        }
        if tokenizer.is_none() {
            return invalid!(
                "item {i} is truncatable but the pipeline has no tokenizer to cut it with \
                 (cupel_pipeline_set_tokenizer)"
            );
        }
    }
    Ok(())
}

/// Fills what the slicer left (`outcome`) with truncatable items of
/// `candidates` (the Slice stage's input) cut to fit; `view` has the
/// scores the slicer used. Nothing to do without a tokenizer.
pub fn fill(
    items: &Items,
    view: View<'_>,
    tokenizer: Option<&Tokenizer>,
    candidates: &[u32],
    outcome: &mut Outcome,
) {
    let Some(tokenizer) = tokenizer else { return };
    if !items.has_truncatable() {
        return;
    }
    let mut out = vec![false; items.len()];
    for &i in outcome.selected.iter().chain(&outcome.cap_excluded) {
        out[i as usize] = true;
    }
    let mut pool: Vec<u32> = candidates
        .iter()
        .copied()
        .filter(|&i| {
            !out[i as usize]
                && items.truncatable(i).is_some()
                && items.group(i) == 0
                && !items.pinned(i)
                && view.tokens(i) > 0
        })
        .collect();
    // Score per token descending, then push order.
    let density = |i: u32| view.score(i) / view.tokens(i) as f64;
    pool.sort_by(|&a, &b| {
        density(b)
            .partial_cmp(&density(a))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    let mut left = outcome
        .effective_target
        .saturating_sub(outcome.selected_tokens);
    for i in pool {
        let t = items.truncatable(i).expect("a truncatable item");
        // (min_tokens >= 0: what is left is never negative past here, even
        // after a count slicer's commitments overran the target.)
        if left < t.min_tokens {
            continue;
        }
        let content = items.content(i).expect("checked before the run");
        let cut = tokenizer.truncate(content, left as usize, t.keep);
        let kept = cut.tokens as i64;
        if kept < t.min_tokens {
            continue;
        }
        left -= kept;
        outcome.selected.push(i);
        outcome.selected_tokens = outcome.selected_tokens.saturating_add(kept);
        outcome.shrunk.insert(
            i,
            Shrunk {
                variant: 0,
                tokens: kept,
                cut: Some((cut.head_end, cut.tail_start)),
            },
        );
    }
}

/// The share of its score item `i` keeps as it is included: a variant's
/// value, or a cut's kept tokens over the item's own (1 as pushed).
pub fn share(items: &Items, view: View<'_>, i: u32, shrunk: Option<&Shrunk>) -> f64 {
    match shrunk {
        None => 1.0,
        Some(s) if s.variant > 0 => items.variants(i)[s.variant as usize - 1].value,
        Some(s) => {
            let own = view.tokens(i);
            if own <= 0 {
                1.0
            } else {
                (s.tokens as f64 / own as f64).min(1.0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::NewItem;
    use crate::text::tokenizer::Keep;

    fn push(it: &mut Items, tokens: i64, score: f64) {
        it.push(NewItem {
            tokens,
            score,
            kind: None,
        })
        .unwrap();
    }

    fn cut(min_tokens: i64) -> Option<Truncatable> {
        Some(Truncatable {
            keep: Keep::Head,
            min_tokens,
        })
    }
    use crate::items::Truncatable;

    #[test]
    fn check_names_the_first_item_without_content_or_tokenizer() {
        let tok = Tokenizer::builtin("o200k_base").unwrap();
        let mut it = Items::new();
        for _ in 0..3 {
            push(&mut it, 10, 0.5);
        }
        assert!(check(&it, None).is_ok(), "nothing truncatable");
        it.set_truncatable(2, cut(1)).unwrap();
        let e = check(&it, Some(&tok)).unwrap_err().to_string();
        assert!(
            e.contains("item 2 is truncatable but has no content"),
            "{e}"
        );
        it.set_content(2, "some text").unwrap();
        assert!(check(&it, Some(&tok)).is_ok());
        let e = check(&it, None).unwrap_err().to_string();
        assert!(
            e.contains("item 2 is truncatable but the pipeline has no tokenizer"),
            "{e}"
        );
        it.set_truncatable(1, cut(0)).unwrap();
        let e = check(&it, Some(&tok)).unwrap_err().to_string();
        assert!(e.starts_with("item 1 "), "the first one: {e}");
    }

    #[test]
    fn fill_cuts_the_densest_first_and_passes_over_what_cannot_reach_min_tokens() {
        let tok = Tokenizer::builtin("o200k_base").unwrap();
        let text = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
        let mut it = Items::new();
        push(&mut it, 10, 0.5); // 0: 0.05 per token
        push(&mut it, 10, 0.9); // 1: 0.09 per token, needs 8
        push(&mut it, 10, 0.2); // 2: 0.02 per token, needs 2
        for i in 0..3 {
            it.set_content(i, text).unwrap();
        }
        it.set_truncatable(0, cut(3)).unwrap();
        it.set_truncatable(1, cut(8)).unwrap();
        it.set_truncatable(2, cut(2)).unwrap();
        let view = it.view();
        let mut outcome = Outcome {
            effective_target: 7,
            effective_max: 7,
            ..Outcome::default()
        };
        fill(&it, view, Some(&tok), &[1, 0, 2], &mut outcome);
        // Item 1 first: 7 tokens left < its 8, passed over; item 0 cut to
        // 7; nothing left for item 2.
        assert_eq!(outcome.selected, vec![0]);
        assert_eq!(outcome.selected_tokens, 7);
        let s = outcome.shrunk[&0];
        assert_eq!((s.variant, s.tokens), (0, 7));
        let (head, tail) = s.cut.unwrap();
        assert_eq!(
            (&text[..head], tail),
            ("alpha beta gamma delta epsilon zeta", text.len())
        );
        assert_eq!(tok.count(&text[..head]), 7);
        assert!((share(&it, view, 0, Some(&s)) - 0.7).abs() < 1e-12);
        assert_eq!(share(&it, view, 0, None), 1.0);
        // No tokenizer: nothing is cut.
        let mut outcome = Outcome {
            effective_target: 7,
            ..Outcome::default()
        };
        fill(&it, view, None, &[1, 0, 2], &mut outcome);
        assert!(outcome.selected.is_empty());
    }

    #[test]
    fn density_decides_and_nothing_is_cut_from_an_overrun_or_for_a_zero_token_item() {
        let tok = Tokenizer::builtin("o200k_base").unwrap();
        let mut it = Items::new();
        push(&mut it, 5, 0.5); // 0.1 per token
        push(&mut it, 60, 0.6); // 0.01 per token, but the larger score
        push(&mut it, 0, 0.9); // no tokens: never cut
        for i in 0..3 {
            it.set_content(i, "one two three four five six seven eight")
                .unwrap();
            it.set_truncatable(i, cut(0)).unwrap();
        }
        let view = it.view();
        let run = |target: i64, selected_tokens: i64| {
            let mut outcome = Outcome {
                effective_target: target,
                selected_tokens,
                ..Outcome::default()
            };
            fill(&it, view, Some(&tok), &[1, 0, 2], &mut outcome);
            outcome
        };
        let o = run(4, 0);
        assert_eq!(
            o.selected,
            vec![0, 1],
            "item 0 first, cut to 4; item 1 to 0"
        );
        assert_eq!((o.shrunk[&0].tokens, o.shrunk[&1].tokens), (4, 0));
        // A count slicer's commitments overran the target: nothing is cut.
        let o = run(4, 9);
        assert!(o.selected.is_empty(), "{:?}", o.selected);
        // A variant keeps its value's share of the score.
        it.add_variant(0, 2, 0.25, None).unwrap();
        let v = Shrunk {
            variant: 1,
            tokens: 2,
            cut: None,
        };
        assert_eq!(share(&it, it.view(), 0, Some(&v)), 0.25);
    }

    #[test]
    fn fill_leaves_selected_capped_grouped_and_pinned_items_alone() {
        let tok = Tokenizer::builtin("o200k_base").unwrap();
        let mut it = Items::new();
        for i in 0..5 {
            push(&mut it, 4, 0.5 + i as f64 / 10.0);
            it.set_content(i, "one two three four").unwrap();
            it.set_truncatable(i, cut(1)).unwrap();
        }
        it.set_group(2, 9).unwrap();
        it.set_pinned(3, true).unwrap();
        let mut outcome = Outcome {
            effective_target: 100,
            selected: vec![0],
            selected_tokens: 4,
            cap_excluded: vec![1],
            ..Outcome::default()
        };
        fill(&it, it.view(), Some(&tok), &[0, 1, 2, 3, 4], &mut outcome);
        assert_eq!(outcome.selected, vec![0, 4]);
        assert_eq!(outcome.selected_tokens, 8);
        // A share is never over 1 (the tokenizer may count more than the host).
        let s = Shrunk {
            variant: 0,
            tokens: 9,
            cut: Some((0, 0)),
        };
        assert_eq!(share(&it, it.view(), 4, Some(&s)), 1.0);
    }
}
