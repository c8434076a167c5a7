#!/usr/bin/env python3
"""The demo's section 0c in Python: the session of examples/data/session
under the same policy file (examples/policy.json) and budget
(examples/budget.json), through the Python binding's one-call path. It
prints the same "Selected (prompt order):" line as the C demo
(examples/demo.c), which tests/binding_demos.rs checks.

    python3 examples/policy_select.py

The binding is bindings/python/src with the library at $CUPEL_LIB or
target/release/libcupel.so (`cargo build --release` first).
"""
import csv
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bindings" / "python" / "src"))
os.environ.setdefault("CUPEL_LIB", str(ROOT / "target" / "release" / "libcupel.so"))
import cupel  # noqa: E402  (after the path is set)

SESSION = ROOT / "examples" / "data" / "session"


def messages():
    """One message per file of the manifest: its text, kind, the host's
    relevance as its score, its minute as a timestamp, pinned, and its
    keep-together group (a tool call and its output share one)."""
    rows = (line for line in (SESSION / "manifest.csv").read_text().splitlines() if not line.startswith("#"))
    out = []
    for row in csv.DictReader(rows):
        m = {
            "file": row["file"],
            "text": (SESSION / row["file"]).read_text(),
            "kind": row["kind"],
            "score": float(row["score"]),
            "pinned": row["pinned"] == "1",
        }
        if row["minute"]:
            m["timestamp"] = int(row["minute"]) * 60_000
        if row["group"] != "0":
            m["group"] = row["group"]
        out.append(m)
    return out


def main():
    policy = (ROOT / "examples" / "policy.json").read_text()
    with cupel.Budget.from_json((ROOT / "examples" / "budget.json").read_text()) as budget:
        kept = cupel.select(messages(), budget=budget, policy=policy)
    print("Selected (prompt order): " + " ".join(m["file"] for m in kept))


if __name__ == "__main__":
    main()
