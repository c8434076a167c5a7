"""The C demo's pipeline (examples/demo.c) in Python, on the same bundled
data: 0.6 x the retriever's score + 0.25 x recency + 0.15 x kind weight,
deduplication, GreedySlice, chronological placement, max 8192 tokens with
1024 kept for the answer and a 4096 target; tool calls and their outputs
in keep-together groups. Prints the same "placed:" line as the C demo.

    python3 bindings/python/demo.py [CSV]

Without CSV it reads the repository's examples/data/rag_candidates.csv,
found relative to this script (../../examples/data/), from any directory.
"""
import csv
import sys
from pathlib import Path

import cupel

DATA = Path(__file__).resolve().parent.parent.parent / "examples" / "data" / "rag_candidates.csv"
USAGE = f"usage: {Path(sys.argv[0]).name} [CSV]  (default: {DATA}, relative to this script)"


def main(path: Path) -> None:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    records = [
        {
            "tokens": int(r["tokens"]),
            "score": float(r["score"]),
            "kind": r["kind"],
            "content": r["title"],
            "timestamp": int(r["timestamp"]) if r["timestamp"] else None,
            "pinned": r["pinned"] == "1",
            "group": int(r["group"]),
        }
        for r in rows
    ]
    s = cupel.scorers
    with cupel.Items(records) as items, cupel.Pipeline(
        scorer=s.Composite([(s.Given(), 0.6), (s.Recency(), 0.25), (s.Kind(), 0.15)]),
        slicer=cupel.Greedy(),
        placer=cupel.Chronological(),
    ) as pipeline:
        placed, report = pipeline.run(items, cupel.Budget(8192, 4096, output_reserve=1024), report=True)
        print("placed: " + " ".join(map(str, placed)))
        tokens = sum(d.item_tokens for d in report.included)
        print(f"{len(placed)} of {len(records)} items, {tokens} tokens; {len(report.excluded)} left out")


if __name__ == "__main__":
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help")):
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    path = Path(sys.argv[1]) if len(sys.argv) == 2 else DATA
    if not path.is_file():
        where = "" if len(sys.argv) == 2 else " (the repository's examples/data, found relative to this script)"
        print(f"demo.py: no data file at {path}{where}\n{USAGE}", file=sys.stderr)
        sys.exit(2)
    main(path)
