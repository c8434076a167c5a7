"""Cross-binding check driver: reads the cases tests/common/cross.rs writes
and prints one result line per case (the format is in that file)."""
import sys

import cupel

s = cupel.scorers


def scorer(t):
    name = t.pop(0)
    if name in ("recency", "priority", "frequency", "reflexive", "given"):
        return getattr(s, name.capitalize())()
    if name in ("kind", "tag"):
        n = int(t.pop(0))
        if n < 0:
            return s.Kind()
        w = {}
        for _ in range(n):
            k = t.pop(0)
            w[k] = float(t.pop(0))
        return s.Kind(w) if name == "kind" else s.Tag(w)
    if name == "composite":
        parts = []
        for _ in range(int(t.pop(0))):
            w = float(t.pop(0))
            parts.append((scorer(t), w))
        return s.Composite(parts)
    if name == "scaled":
        return s.Scaled(scorer(t))
    if name == "trust":
        return s.MetadataTrust(float(t.pop(0)))
    if name == "key":
        k, v, b = t.pop(0), t.pop(0), float(t.pop(0))
        return s.MetadataKey(k, v, b)
    if name == "decay":
        curve, duration, null, ref = int(t.pop(0)), float(t.pop(0)), float(t.pop(0)), int(t.pop(0))
        windows = [(float(t.pop(0)), float(t.pop(0))) for _ in range(int(t.pop(0)))]
        return s.Decay(curve, reference_time=ref, duration_secs=duration, windows=windows,
                       null_timestamp_score=null)
    raise ValueError(name)


def entries(t, percent):
    out = {}
    for _ in range(int(t.pop(0))):
        k = t.pop(0)
        out[k] = (float(t.pop(0)), float(t.pop(0))) if percent else (int(t.pop(0)), int(t.pop(0)))
    return out


def slicer(t):
    name = t.pop(0)
    if name == "greedy":
        return cupel.Greedy()
    if name == "knapsack":
        return cupel.Knapsack(int(t.pop(0)))
    if name == "quota":
        return cupel.Quota(cupel.Greedy(), entries(t, True))
    if name == "countquota":
        return cupel.CountQuota(cupel.Greedy(), entries(t, False))
    b = int(t.pop(0))
    return cupel.CountConstrainedKnapsack(b, entries(t, False))


def item(line):
    t = line.split()
    rec = {"tokens": int(t[0]), "kind": t[1], "pinned": t[2] == "1", "group": int(t[3])}
    for i, (name, conv) in enumerate([("timestamp", int), ("priority", int), ("relevance_hint", float)]):
        if t[4 + i] != "-":
            rec[name] = conv(t[4 + i])
    k = 7
    ntags = int(t[k])
    rec["tags"] = t[k + 1:k + 1 + ntags]
    k += 1 + ntags
    nmeta = int(t[k])
    rec["metadata"] = {t[k + 1 + 2 * j]: t[k + 2 + 2 * j] for j in range(nmeta)}
    rec["content"] = bytes.fromhex(t[-1]).decode()
    return rec


def run(lines):
    it = iter(lines)
    for line in it:
        if line != "case":
            continue
        b = next(it).split()[1:]
        sc = scorer(next(it).split()[1:])
        sl = slicer(next(it).split()[1:])
        n = int(next(it).split()[1])
        records = [item(next(it)) for _ in range(n)]
        assert next(it) == "end"
        placer = cupel.UShaped() if b[5] == "u" else cupel.Chronological()
        with cupel.Items(records) as items, cupel.Budget(int(b[0]), int(b[1]), output_reserve=int(b[2])) as budget, \
                cupel.Pipeline(scorer=sc, slicer=sl, placer=placer, deduplication=b[3] == "1",
                               overflow=cupel.Overflow(int(b[4]))) as p:
            try:
                placed, r = p.run(items, budget, report=True)
            except cupel.CupelError as e:
                print(f"error {int(e.status)}")
                continue
            dec = lambda ds: "".join(f" {d.index}:{int(d.reason)}" for d in ds)
            print("P" + "".join(f" {i}" for i in placed) + "|I" + dec(r.included) + "|E" + dec(r.excluded))


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        run(f.read().splitlines())
