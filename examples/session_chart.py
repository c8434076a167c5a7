#!/usr/bin/env python3
"""Draws the cost of the demo's 72-turn conversation (examples/demo.c,
section 6) turn by turn: the cumulative cost under prefix-cache pricing of
a session (cupel.Session) against the same pipeline run afresh every turn.

    python3 examples/session_chart.py [COSTS_CSV [OUT_PNG]]

It replays the conversation itself (examples/data/conversation/turns.csv)
through the Python binding (bindings/python/src, the library at $CUPEL_LIB
or target/release/libcupel.so): the same list each turn, the same pipeline
(2 x recency + 1 x kind, GreedySlice, chronological), the same 16,000-token
budget and prices (1.25 a token not cached, 0.1 a cached one) as the C demo.
When COSTS_CSV (default target/examples/session_costs.csv, written by the C
demo) exists too, it checks that both agree. Without a binding that has
sessions (or without the library), it draws COSTS_CSV instead. The chart
goes to OUT_PNG (default target/examples/session_cost.png); matplotlib's
non-interactive Agg backend, so no display is needed.
"""
import csv
import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

ROOT = Path(__file__).resolve().parent.parent
TURNS = ROOT / "examples" / "data" / "conversation" / "turns.csv"
BUDGET = 16_000
UNCACHED, CACHED = 1.25, 0.1
KIND_WEIGHTS = {"SystemPrompt": 1.0, "Memory": 0.8, "ToolOutput": 0.6, "Document": 0.4, "Message": 0.2,
                "ToolCall": 0.6}


def cost(sent, cached):
    return UNCACHED * (sent - cached) + CACHED * cached


def import_cupel():
    """The repository's binding, or None when it (or its sessions, or the
    library) is not there."""
    sys.path.insert(0, str(ROOT / "bindings" / "python" / "src"))
    os.environ.setdefault("CUPEL_LIB", str(ROOT / "target" / "release" / "libcupel.so"))
    try:
        import cupel
    except (ImportError, OSError) as e:
        print(f"session_chart: no Python binding ({e})")
        return None
    if not hasattr(cupel, "Session"):
        print("session_chart: the Python binding has no Session")
        return None
    return cupel


def replay(cupel):
    """Runs every turn through a fresh pipeline and a session: a list of
    per-turn dicts with the columns the C demo writes."""
    with open(TURNS, newline="") as f:
        rows = list(csv.DictReader(f))
    last = max(int(r["turn"]) for r in rows)
    s = cupel.scorers
    pipeline = cupel.Pipeline(scorer=s.Composite([(s.Recency(), 2.0), (s.Kind(KIND_WEIGHTS), 1.0)]),
                              slicer=cupel.Greedy(), placer=cupel.Chronological())
    session = cupel.Session(pipeline)
    budget = cupel.Budget(BUDGET, BUDGET)
    out, prev_fresh = [], []
    total_s = total_f = 0.0
    for turn in range(1, last + 1):
        chosen = [(i, r) for i, r in enumerate(rows)
                  if int(r["turn"]) <= turn and (r["volatile"] == "0" or int(r["turn"]) == turn)]
        records = []
        for i, r in chosen:
            rec = dict(tokens=int(r["tokens"]), score=0.5, kind=r["kind"], content=r["content"], timestamp=i * 1000,
                       key=int(r["key"]), volatile=r["volatile"] == "1", pinned=r["pinned"] == "1",
                       group=int(r["group"]))
            if int(r["placeholder"]):
                rec["variants"] = [(int(r["placeholder"]), 0.1, f"[output cleared: {r['tokens']} tokens]")]
            records.append(rec)
        items = cupel.Items.from_records(records)
        _, rep_f = pipeline.run(items, budget, report=True)
        _, rep_s = session.run(items, budget, report=True)

        def sent(rep):
            return [(int(chosen[d.index][1]["key"]), d.variant, d.tokens_added) for d in rep.included]

        def relevance(rep):
            return sum(d.score for d in rep.included if chosen[d.index][1]["pinned"] == "0")

        now_f, now_s = sent(rep_f), sent(rep_s)
        cached_f = 0
        for a, b in zip(prev_fresh, now_f):
            if a[:2] != b[:2]:
                break
            cached_f += b[2]
        prev_fresh = now_f
        sent_f, sent_s = sum(e[2] for e in now_f), sum(e[2] for e in now_s)
        cached_s = session.stable_prefix.tokens
        total_s += cost(sent_s, cached_s)
        total_f += cost(sent_f, cached_f)
        out.append(dict(turn=turn, action=session.last_action.name.lower(), session_sent=sent_s,
                        session_cached=cached_s, fresh_sent=sent_f, fresh_cached=cached_f,
                        session_cost_total=total_s, fresh_cost_total=total_f,
                        session_relevance=relevance(rep_s), fresh_relevance=relevance(rep_f)))
        items.close()
    return out


def read_csv(path):
    with open(path, newline="") as f:
        return [dict(r, turn=int(r["turn"]), **{k: float(r[k]) for k in r if k not in ("turn", "action")})
                for r in csv.DictReader(f)]


def agree(a, b):
    """Whether the replay and the C demo's CSV give the same figures."""
    keys = ("session_sent", "session_cached", "fresh_sent", "fresh_cached")
    return len(a) == len(b) and all(x["action"] == y["action"] and all(float(x[k]) == float(y[k]) for k in keys)
                                    for x, y in zip(a, b))


def draw(data, source, png):
    turns = [d["turn"] for d in data]
    ses = [d["session_cost_total"] / 1000 for d in data]
    fre = [d["fresh_cost_total"] / 1000 for d in data]
    ratio = ses[-1] / fre[-1]
    sent_s = sum(float(d["session_sent"]) for d in data)
    sent_f = sum(float(d["fresh_sent"]) for d in data)
    cache_s = sum(float(d["session_cached"]) for d in data) / sent_s
    cache_f = sum(float(d["fresh_cached"]) for d in data) / sent_f
    fig, ax = plt.subplots(figsize=(9, 5.2), dpi=120)
    ax.plot(turns, fre, color="#c0392b", lw=2,
            label=f"pipeline run afresh each turn (cached prefix {cache_f:.0%} of tokens sent)")
    ax.plot(turns, ses, color="#2471a3", lw=2,
            label=f"session, cupel_session_run (cached prefix {cache_s:.0%} of tokens sent)")
    compact = [(d["turn"], d["session_cost_total"] / 1000) for d in data if d["action"] == "compact"]
    if compact:
        ax.scatter(*zip(*compact), s=18, color="#2471a3", zorder=3, label=f"session compactions ({len(compact)})")
    ax.annotate(f"session / fresh = {ratio:.2f}", xy=(turns[-1], ses[-1]), xytext=(-10, 28),
                textcoords="offset points", ha="right", fontsize=10,
                arrowprops=dict(arrowstyle="-", color="gray"))
    ax.set_title(f"Cost of a {len(turns)}-turn agent conversation at a {BUDGET:,}-token budget\n"
                 f"prefix-cache pricing: {UNCACHED} per token not cached, {CACHED} per cached token",
                 fontsize=11)
    ax.set_xlabel("turn")
    ax.set_ylabel("cumulative cost (thousands of base-price input tokens)")
    ax.set_xlim(1, turns[-1])
    ax.set_ylim(0, None)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=9, frameon=False)
    fig.text(0.99, 0.01, f"data: {source}", ha="right", va="bottom", fontsize=7, color="gray")
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png)
    print(f"session_chart: {png} (session / fresh cost {ratio:.2f}; cached-prefix ratio session {cache_s:.2f}, "
          f"fresh {cache_f:.2f}; data {source})")


def main():
    costs = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target" / "examples" / "session_costs.csv"
    png = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "target" / "examples" / "session_cost.png"
    cupel = import_cupel()
    data = None
    if cupel is not None:
        try:
            data = replay(cupel)
        except (AttributeError, TypeError) as e:  # a binding whose API differs from the one this was written for
            print(f"session_chart: the replay failed ({type(e).__name__}: {e}); drawing {costs} instead")
    if data is not None:
        source = "replayed through the Python binding (cupel.Session)"
        if costs.exists():
            same = agree(data, read_csv(costs))
            print(f"session_chart: the replay {'agrees' if same else 'DISAGREES'} with the C demo's {costs}")
            if not same:
                sys.exit(1)
    elif costs.exists():
        data, source = read_csv(costs), f"{costs.name}, written by the C demo"
    else:
        sys.exit(f"session_chart: no Python binding with sessions and no {costs}: run examples/demo.sh first")
    draw(data, source, png)


if __name__ == "__main__":
    main()
