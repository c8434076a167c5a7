"""The binding benchmark in Python (see bench_c.c): push + run, median of 25;
once with the columnar fast path (Items.from_columns: one native call per
column), once from a list of dicts (Items(records))."""
import statistics
import sys
import time

import cupel

records = []
with open(sys.argv[1]) as f:
    for line in f:
        tok, score, kind, ts, pin, content = line.split()
        records.append({"tokens": int(tok), "score": float(score), "kind": kind, "timestamp": int(ts),
                        "pinned": pin == "1", "content": content})
s = cupel.scorers
pipeline = cupel.Pipeline(scorer=s.Composite([(s.Recency(), 1), (s.Kind(), 1)]), slicer=cupel.Greedy(),
                          placer=cupel.Chronological(), overflow=cupel.Overflow.PROCEED)
budget = cupel.Budget(200000, 128000)
cols = {k: [r[k] for r in records] for k in records[0]}


def columns():
    return cupel.Items.from_columns(cols["tokens"], cols["score"], kinds=cols["kind"], contents=cols["content"],
                                    timestamps=cols["timestamp"], pinned=cols["pinned"])


for label, make in [("Python (columns)", columns), ("Python (list of dicts)", lambda: cupel.Items(records))]:
    times = []
    for _ in range(25):
        start = time.perf_counter()
        with make() as items:
            placed = pipeline.run(items, budget)
        times.append((time.perf_counter() - start) * 1e3)
    print(f"{label}: {statistics.median(times):.3f} ms (placed {len(placed)})")
