"""Writes the binding benchmark's items: N lines of `tokens score kind
timestamp pinned content`, seeded (one item in eight repeats an earlier
content; item 0 a pinned system prompt)."""
import random
import sys

n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(n)
kinds = ["Message", "Document", "ToolOutput", "Memory"]
with open(path, "w") as f:
    for i in range(n):
        content = f"chunk{rng.randrange(i)}" if i and rng.randrange(8) == 0 else f"chunk{i}"
        kind = "SystemPrompt" if i == 0 else rng.choice(kinds)
        f.write(f"{rng.randint(1, 2000)} {rng.randrange(1000000) / 1e6} {kind} "
                f"{1_700_000_000_000 + rng.randrange(30 * 86_400_000)} {1 if i == 0 else 0} {content}\n")
