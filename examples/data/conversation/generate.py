#!/usr/bin/env python3
"""Generates turns.csv: a 72-turn coding-agent conversation for the demo's
section 6 (sessions). Seeded, so the file is reproducible:

    python3 examples/data/conversation/generate.py > examples/data/conversation/turns.csv

One row per item, in the order the items happened. Columns:

- turn: the turn that adds it (0: the pinned system prompt and tool
  definitions, there from the start); a volatile row belongs to its turn only;
- kind: SystemPrompt, Message, ToolCall, ToolOutput or Document;
- tokens;
- key: the item's identity from one turn to the next (history items are
  numbered 1, 2, ...; a retrieved document keeps its own key, 1000000 + its
  number in the corpus, whichever turn retrieves it);
- group: a tool call and its result share one (0: none);
- volatile: 1 for the documents retrieved for this turn only;
- pinned: 1 for the system prompt and the tool definitions;
- placeholder: the tokens of the stand-in a tool result may be replaced by
  ("[output cleared: N tokens]"), 0 for other items;
- content: a short description of the item (no commas), last.

Each turn: a user message, 0-3 tool calls each with its result (lognormal
sizes, median 600 tokens), the assistant's reply, and 2-3 documents
retrieved from a 40-document corpus: about 2,000 tokens of history a turn,
some 150,000 tokens by the end, far above the demo's 16,000-token budget.
"""
import math
import random

SEED = 20261127
TURNS = 72
rng = random.Random(SEED)


def lognormal(median, sigma, lo, hi):
    return max(lo, min(hi, int(median * math.exp(rng.gauss(0.0, sigma)))))


areas = ["auth", "billing", "search", "scheduler", "storage", "http", "cli", "metrics"]
asks = [
    "why does the {a} test fail on CI", "add retries to the {a} client", "rename the {a} config keys",
    "profile the {a} hot path", "write a migration for {a}", "review the {a} error handling",
    "split the {a} module in two", "fix the flaky {a} integration test", "document the {a} API",
    "bump the {a} dependency and fix the build",
]
tools = [
    ("grep", "grep -rn '{a}_' src/"), ("read", "read src/{a}/mod.rs"), ("test", "cargo test {a}::"),
    ("log", "git log -p src/{a}"), ("build", "cargo build --release"), ("diff", "git diff src/{a}"),
]
replies = ["explained the cause in {a}", "proposed a patch to {a}", "applied the change to {a}",
           "listed what is left in {a}", "asked which {a} behaviour to keep"]
corpus = [(1_000_000 + d, lognormal(350, 0.5, 80, 2_000), f"docs/{areas[d % len(areas)]}/page-{d:02d}.md")
          for d in range(40)]

rows = [
    (0, "SystemPrompt", 1_200, 1, 0, 0, 1, 0, "system: coding agent instructions"),
    (0, "SystemPrompt", 2_500, 2, 0, 0, 1, 0, "system: tool definitions (grep read test log build diff)"),
]
key, group = 2, 0
for turn in range(1, TURNS + 1):
    area = rng.choice(areas)
    key += 1
    ask = rng.choice(asks).format(a=area)
    rows.append((turn, "Message", lognormal(80, 0.8, 5, 2_000), key, 0, 0, 0, 0, f"user: {ask} (turn {turn})"))
    for c in range(rng.randrange(4)):
        group += 1
        name, cmd = rng.choice(tools)
        call = lognormal(60, 0.5, 10, 400)
        result = lognormal(600, 1.1, 20, 12_000)
        key += 1
        rows.append((turn, "ToolCall", call, key, group, 0, 0, 0, f"call: {cmd.format(a=area)} (turn {turn} #{c + 1})"))
        key += 1
        rows.append((turn, "ToolOutput", result, key, group, 0, 0, 12,
                     f"result: {name} output of {result} tokens (turn {turn} #{c + 1})"))
    key += 1
    reply = rng.choice(replies).format(a=area)
    rows.append((turn, "Message", lognormal(250, 0.7, 10, 3_000), key, 0, 0, 0, 0, f"assistant: {reply} (turn {turn})"))
    for doc_key, tokens, name in rng.sample(corpus, rng.choice([2, 3])):
        rows.append((turn, "Document", tokens, doc_key, 0, 1, 0, 0, f"retrieved: {name}"))

print("turn,kind,tokens,key,group,volatile,pinned,placeholder,content")
for r in rows:
    assert "," not in r[-1]
    print(",".join(str(x) for x in r))
