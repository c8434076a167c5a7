"""The one-call path's cross-binding driver (tests/select_agreement.rs):
reads the cases' JSON file, calls `cupel.select` on each and prints
`case K: i j ...` (the kept messages' indices, in prompt order) or
`case K: error` (the message on stderr).

    python3 select_cross.py cases.json

A case: `max_tokens`, `messages` (the fields of `cupel.Message`; `key` as
decimal text), and optionally `policy` and `tokenizer`. An absent policy
is left out on even cases and passed as None on odd ones."""
import json
import sys

import cupel


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    for k, case in enumerate(cases):
        messages = []
        for m in case["messages"]:
            m = dict(m)
            if "key" in m:
                m["key"] = int(m["key"])
            messages.append(m)
        kw = {}
        if "policy" in case:
            kw["policy"] = case["policy"]
        elif k % 2:
            kw["policy"] = None
        if "tokenizer" in case:
            kw["tokenizer"] = case["tokenizer"]
        try:
            kept = cupel.select(messages, case["max_tokens"], **kw)
        except cupel.CupelError as e:
            print(f"case {k}: error")
            print(f"case {k}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        index = {id(m): i for i, m in enumerate(messages)}
        print(f"case {k}:" + "".join(f" {index[id(m)]}" for m in kept))


if __name__ == "__main__":
    main()
