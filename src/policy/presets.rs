//! The named presets: the .NET seven, with the same scorers and weights,
//! slicer, placer and bucket size, deduplication on and overflow "throw";
//! then libcupel's own (docs/policies.md gives each its reason).

use crate::error::{Error, Result};
use crate::pipeline::Pipeline;
use crate::placer::Placer;
use crate::scorer::Scorer;
use crate::slicer::{Knapsack, Slicer};

/// Every preset's name, as the table spells it (matched case-insensitively).
pub const NAMES: [&str; 8] = [
    "Chat",
    "CodeReview",
    "Rag",
    "DocumentQa",
    "ToolUse",
    "LongRunning",
    "Debugging",
    "AgentLoop",
];

#[derive(Clone, Copy)]
enum S {
    Recency,
    Kind,
    Priority,
    Reflexive,
    Frequency,
}

/// (scorers, knapsack, u-shaped) of each preset of [`NAMES`].
fn table(k: usize) -> (&'static [(S, f64)], bool, bool) {
    use S::*;
    match k {
        0 => (&[(Recency, 3.0), (Kind, 1.0)], false, false),
        1 => (
            &[(Kind, 2.0), (Priority, 2.0), (Recency, 1.0)],
            false,
            false,
        ),
        2 => (&[(Reflexive, 3.0), (Kind, 1.0)], false, true),
        3 => (
            &[(Kind, 2.0), (Reflexive, 2.0), (Priority, 1.0)],
            true,
            true,
        ),
        4 => (
            &[(Kind, 2.0), (Recency, 2.0), (Priority, 1.0)],
            false,
            false,
        ),
        5 => (
            &[(Recency, 3.0), (Frequency, 1.0), (Kind, 1.0)],
            false,
            false,
        ),
        6 => (
            &[(Priority, 3.0), (Kind, 2.0), (Recency, 1.0)],
            false,
            false,
        ),
        _ => (
            &[(Recency, 3.0), (Kind, 2.0), (Reflexive, 1.0)],
            false,
            false,
        ),
    }
}

/// The preset `name` (ASCII case-insensitive).
pub fn preset(name: &str) -> Result<Pipeline> {
    let Some(k) = NAMES.iter().position(|n| n.eq_ignore_ascii_case(name)) else {
        return Err(Error::InvalidArgument(format!(
            "name {name:?} is no preset; the presets are {}",
            NAMES.join(", ")
        )));
    };
    let (scorers, knapsack, u_shaped) = table(k);
    let children = scorers
        .iter()
        .map(|&(s, w)| {
            let scorer = match s {
                S::Recency => Scorer::Recency,
                S::Kind => Scorer::kind(None)?,
                S::Priority => Scorer::Priority,
                S::Reflexive => Scorer::Reflexive,
                S::Frequency => Scorer::Frequency,
            };
            Ok((scorer, w))
        })
        .collect::<Result<Vec<_>>>()?;
    let slicer = match knapsack {
        true => Slicer::Knapsack(Knapsack::new(100)?),
        false => Slicer::Greedy,
    };
    let placer = match u_shaped {
        true => Placer::UShaped,
        false => Placer::Chronological,
    };
    let mut p = Pipeline::new(
        Some(Scorer::composite(children)?),
        crate::pipeline::Engine::new(slicer),
        Some(placer),
    );
    p.policy.name = Some(NAMES[k].to_string());
    if NAMES[k] == "AgentLoop" {
        // An agent's loop: a session's slack as measured (docs/sessions.md),
        // tool outputs counted exactly.
        p.policy.description = Some(
            "An agent loop: recent turns first, the system prompt and memories by kind, \
             host relevance hints; greedy (groups and variants), chronological order, \
             sessions with slack 0.2, o200k_base token counts"
                .into(),
        );
        p.policy.session_slack = Some(0.2);
        #[cfg(feature = "builtin-vocabularies")]
        {
            p.tokenizer = Some(crate::text::tokenizer::Tokenizer::builtin("o200k_base")?);
        }
    }
    Ok(p)
}
