import { load, Keep } from "libcupel";

const cupel = await load();
const tokenizer = cupel.tokenizer("o200k_base"); // the vocabulary is inside cupel.wasm: nothing is downloaded
console.log(tokenizer.count("Hello, world! This is libcupel counting tokens."));
console.log(tokenizer.countMany(["日本語のテキスト", "🦀 crabs", ""]));

// Offsets are string indices (UTF-16 code units), whatever the script.
const jp = tokenizer.truncate("日本語のテキストを数えます", 2, Keep.Head);
console.log(`${jp.text} (${jp.tokens} tokens, text.slice(0, ${jp.headEnd}))`);

// A long build log cut to 24 tokens: its beginning and its end, the middle goes.
const lines = Array.from({ length: 200 }, (_, i) => `   Compiling crate-${i} v1.0.${i}`);
const log = ["$ cargo build", ...lines, "error[E0425]: cannot find value `x`", "error: could not compile `app`"].join("\n");
const cut = tokenizer.truncate(log, 24, Keep.BothEnds);
console.log(`${tokenizer.count(log)} tokens -> ${cut.tokens}: log.slice(0, ${cut.headEnd}) + log.slice(${cut.tailStart})`);
console.log(JSON.stringify(cut.text));

// Items from text: the tokens are the count, the content the text.
const items = cupel.items()
  .pushText(tokenizer, "user: why does the build fail?", 0.9)
  .pushTexts(tokenizer, [{ text: cut.text, score: 0.5, kind: "ToolOutput" }, "assistant: checking the log"]);
for (let i = 0; i < items.length; i++) {
  const { kind, tokens, content } = items.get(i);
  console.log(`#${i} ${kind.padEnd(10)} ${String(tokens).padStart(3)} tokens  ${content.split("\n")[0]}`);
}
for (const h of [items, tokenizer]) h.dispose();
