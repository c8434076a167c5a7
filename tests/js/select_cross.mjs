// The one-call path's cross-binding driver (tests/select_agreement.rs) for
// the JavaScript binding (bindings/js, its cupel.wasm): reads the cases'
// JSON file, calls `cupel.select` on each and prints `case K: i j ...` (the
// kept messages' indices, in prompt order) or `case K: error` (the message
// on stderr).
//
//   node tests/js/select_cross.mjs cases.json
//
// A case: `max_tokens`, `messages` (snake_case fields, `key` as decimal
// text), and optionally `policy` and `tokenizer`. An absent policy is left
// out on even cases and passed as null on odd ones.
import { readFileSync } from "node:fs";
import { load, CupelError } from "../../bindings/js/index.js";

const cupel = await load();
const { cases } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const NAMES = { tool_call_id: "toolCallId", tool_call_ids: "toolCallIds" };

cases.forEach((c, k) => {
  const messages = c.messages.map((m) => {
    const out = {};
    for (const [field, value] of Object.entries(m)) out[NAMES[field] ?? field] = value;
    if (m.key !== undefined) out.key = BigInt(m.key);
    return out;
  });
  const opts = { maxTokens: c.max_tokens };
  if (c.policy !== undefined) opts.policy = c.policy;
  else if (k % 2) opts.policy = null;
  if (c.tokenizer !== undefined) opts.tokenizer = c.tokenizer;
  let kept;
  try {
    kept = cupel.select(messages, opts);
  } catch (e) {
    if (!(e instanceof CupelError)) throw e;
    console.log(`case ${k}: error`);
    console.error(`case ${k}: ${e.constructor.name}: ${e.message}`);
    return;
  }
  console.log(`case ${k}:` + kept.map((m) => ` ${messages.indexOf(m)}`).join(""));
});
