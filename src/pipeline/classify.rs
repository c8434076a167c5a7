//! Stage 1, Classify (`spec/cupel/pipeline/classify.md`): items with a
//! negative token count are excluded (NegativeTokens); the rest are split,
//! in push order, into pinned and scoreable; the pinned items must fit in
//! `max_tokens - output_reserve`. A group goes as one: every member of a
//! group with a negative-token member is excluded (NegativeTokens), and
//! every member of a group with a pinned member is pinned.

use super::report::{Log, Reason};
use crate::budget::Budget;
use crate::error::{invalid, Result};
use crate::group::Groups;
use crate::items::Items;

/// The two partitions, as item indices in push order.
#[derive(Debug, Default)]
pub struct Classes {
    pub pinned: Vec<u32>,
    pub scoreable: Vec<u32>,
    /// Sum of the pinned items' tokens (saturating).
    pub pinned_tokens: i64,
}

pub fn classify(
    items: &Items,
    budget: &Budget,
    groups: Option<&Groups>,
    log: &mut Log,
) -> Result<Classes> {
    let mut c = Classes::default();
    c.scoreable.reserve(items.len());
    for i in 0..items.len() as u32 {
        let tokens = items.view().tokens(i);
        if tokens < 0 || groups.is_some_and(|g| g.negative(i)) {
            log.exclude(i, 0.0, Reason::NegativeTokens, tokens, 0, None);
        } else if items.pinned(i) || groups.is_some_and(|g| g.pinned(i)) {
            c.pinned.push(i);
            c.pinned_tokens = c.pinned_tokens.saturating_add(tokens);
        } else {
            c.scoreable.push(i);
        }
    }
    let available = budget.max_tokens() - budget.output_reserve();
    if c.pinned_tokens > available {
        return invalid!(
            "the pinned items need {} tokens, but only {available} are available \
             (max_tokens {} - output_reserve {}): unpin items or raise the budget",
            c.pinned_tokens,
            budget.max_tokens(),
            budget.output_reserve()
        );
    }
    log.stage("Classify", items.len());
    Ok(c)
}
