// The benchmark's items, the same on every side: N items with tokens
// 1..2000, a timestamp within 30 days, one of four kinds, content "chunk i"
// (one in eight repeating an earlier chunk), item 0 a pinned system prompt.
// Seeded (xorshift), so the native program reads the same list from the
// file this writes.
export const KINDS = ["Message", "Document", "ToolOutput", "Memory"];

export function items(n, seed = 0x5eed) {
  let s = BigInt(seed) | 1n;
  const next = () => {
    s ^= (s << 13n) & 0xffffffffffffffffn;
    s ^= s >> 7n;
    s ^= (s << 17n) & 0xffffffffffffffffn;
    return s;
  };
  const below = (k) => Number(next() % BigInt(k));
  const list = [];
  for (let i = 0; i < n; i++) {
    const repeat = i > 0 && below(8) === 0;
    list.push({
      tokens: 1 + below(2000),
      score: below(1_000_000) / 1e6,
      kind: i === 0 ? "SystemPrompt" : KINDS[below(4)],
      content: `chunk ${repeat ? below(i) : i}`,
      timestamp: 1_700_000_000_000 + below(30 * 86_400_000),
      pinned: i === 0,
    });
  }
  return list;
}

/** The list as lines for bindings/bench/bench_c.c: tokens score kind timestamp pinned content. */
export function lines(list) {
  return list.map((it) => `${it.tokens} ${it.score} ${it.kind} ${it.timestamp} ${it.pinned ? 1 : 0} ${it.content}`).join("\n") + "\n";
}
