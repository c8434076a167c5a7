#!/usr/bin/env python3
"""Generates rag_candidates.csv: 240 candidates of one retrieval step of a
coding assistant answering "why does login fail after the OAuth token
refresh?". Seeded, so the file is reproducible: python3 generate.py > rag_candidates.csv

Columns: kind, tokens, score (the retriever's relevance), timestamp (UTC
milliseconds since the epoch; empty for documents, which have no time of
their own), pinned (1 for the system prompt), group (a keep-together group
id: each tool call and its tool output share one, 0 for the rest; the call
comes first in the file), title (the item's content: memories recur and
some chunks are retrieved twice, so there are real duplicates)."""
import random

rng = random.Random(20261122)
docs = [
    "docs/auth/oauth.md", "docs/auth/sessions.md", "docs/api/tokens.md", "src/auth/refresh.rs",
    "src/auth/session_store.rs", "src/http/middleware.rs", "docs/ops/incident-0412.md",
    "CHANGELOG.md", "src/auth/jwt.rs", "docs/security/rotation.md", "tests/auth/refresh_test.rs",
    "docs/architecture/overview.md",
]
tools = ["grep 'refresh_token'", "git log -S expires_at", "cargo test auth::refresh", "curl /healthz", "kubectl logs auth-7f9"]
memories = ["user prefers Rust examples", "project uses Redis for sessions", "last week: clock skew bug in staging", "team style: no unwrap in handlers"]
NOW = 1763884800000  # 2025-11-23T08:00:00Z, the moment of the question
MIN = 60_000
rows = []
# The system prompt dates from when the assistant was set up: the oldest item.
rows.append(("SystemPrompt", 180, 1.0, NOW - 60 * 1440 * MIN, 1, 0, "system: coding assistant instructions"))
for turn in range(14):
    rows.append(("Message", rng.randint(20, 220), round(0.35 + 0.6 * turn / 14 + rng.uniform(-0.05, 0.05), 4),
                 NOW - (14 - turn) * 6 * MIN, 0, 0, f"conversation turn {turn + 1}"))
for i in range(170):
    doc = rng.choice(docs)
    rank_score = max(0.02, min(0.99, rng.betavariate(2.2, 3.5) + (0.25 if "auth" in doc else 0.0)))
    rows.append(("Document", rng.choice([rng.randint(60, 300), rng.randint(300, 900)]), round(rank_score, 4),
                 "", 0, 0, f"{doc} chunk {i % 9 + 1}"))
for i in range(40):
    t = rng.choice(tools)
    at = NOW - rng.randint(1, 80) * MIN
    # The assistant's tool call (short, and scored high: it names what was
    # asked) and its output share group i + 1: a provider rejects a call
    # without its result.
    rows.append(("ToolCall", rng.randint(15, 45), round(rng.uniform(0.5, 0.95), 4),
                 at - 2000, 0, i + 1, f"call: {t} (run {i + 1})"))
    rows.append(("ToolOutput", rng.randint(30, 1200), round(rng.uniform(0.1, 0.95), 4),
                 at, 0, i + 1, f"{t} (run {i + 1})"))
for i in range(15):
    rows.append(("Memory", rng.randint(10, 80), round(rng.uniform(0.2, 0.9), 4),
                 NOW - rng.randint(1, 30) * 1440 * MIN, 0, 0, memories[i % len(memories)]))
rng.shuffle(rows)
# Each call before its output (they need not be next to each other).
first = {}
for p, r in enumerate(rows):
    if r[5]:
        if r[5] in first and rows[first[r[5]]][0] == "ToolOutput":
            rows[first[r[5]]], rows[p] = rows[p], rows[first[r[5]]]
        first.setdefault(r[5], p)
print("kind,tokens,score,timestamp,pinned,group,title")
for kind, tokens, score, ts, pinned, group, title in rows:
    print(f"{kind},{tokens},{score},{ts},{pinned},{group},{title}")
