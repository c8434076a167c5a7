// WebAssembly against native C, and against a plain JavaScript greedy:
//   bash bindings/js/bench/run.sh
// Prints median milliseconds per call. The native figures come from
// bindings/bench/bench_c.c --run-only (same items, same pipeline), run by run.sh.
import { writeFileSync } from "node:fs";
import { load, Overflow } from "../index.js";
import { items as makeItems, lines } from "./data.mjs";

const cupel = await load();

function median(f, runs = 25) {
  const t = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    f();
    t.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  t.sort((a, b) => a - b);
  return t[t.length >> 1];
}

/** The plain JavaScript greedy a plugin would write: density order, add while it fits. */
function jsGreedy(list, target) {
  const order = list.map((_, i) => i).filter((i) => list[i].tokens <= target);
  order.sort((a, b) => list[b].score / list[b].tokens - list[a].score / list[a].tokens || a - b);
  const out = [];
  let left = target;
  for (const i of order) {
    if (list[i].tokens <= left) {
      out.push(i);
      left -= list[i].tokens;
    }
  }
  return out;
}

const dir = process.argv[2];
// CUPEL_BENCH_N: the list sizes, comma-separated (run.sh passes its own).
const sizes = (process.env.CUPEL_BENCH_N || "1000,10000,100000").split(",").map(Number);
for (const n of sizes) {
  const list = makeItems(n);
  writeFileSync(`${dir}/items_${n}.txt`, lines(list));
  const items = cupel.items(list);
  const scorer = cupel.scorers.composite([[cupel.scorers.recency(), 1], [cupel.scorers.kind(), 1]]);
  const pipeline = cupel.pipeline({ scorer, slicer: cupel.greedy(), placer: cupel.chronological(), overflow: Overflow.Proceed });
  const budget = cupel.budget({ maxTokens: 200_000, targetTokens: 128_000 });
  const placed = pipeline.run(items, budget).placed;
  const pipe = median(() => pipeline.run(items, budget));
  // The same with Knapsack(100) + U-shaped: the DP kernel's share.
  const knap = cupel.pipeline({ scorer, slicer: cupel.knapsack(100), placer: cupel.uShaped(), overflow: Overflow.Proceed });
  const placedK = knap.run(items, budget).placed;
  const pipeK = median(() => knap.run(items, budget), 9);
  knap.dispose();
  // Greedy on the pushed scores: WebAssembly (items already pushed, and
  // with the push) against plain JavaScript on the same objects.
  const plain = cupel.items(list.map(({ tokens, score }) => ({ tokens, score })));
  const greedy = cupel.greedy();
  const sliceBudget = cupel.budget({ maxTokens: 128_000 });
  const ours = cupel.slice(greedy, plain, sliceBudget).selected;
  const theirs = jsGreedy(list, 128_000);
  if ([...ours].sort((a, b) => a - b).join() !== [...theirs].sort((a, b) => a - b).join()) {
    throw new Error(`N=${n}: the JS greedy chose other items`);
  }
  const wasmSlice = median(() => cupel.slice(greedy, plain, sliceBudget));
  const wasmPushSlice = median(() => {
    const it = cupel.items(list.map(({ tokens, score }) => ({ tokens, score })));
    cupel.slice(greedy, it, sliceBudget);
    it.dispose();
  }, 9);
  const js = median(() => jsGreedy(list, 128_000));
  console.log(`N=${n} pipeline_wasm_ms=${pipe.toFixed(3)} placed=${placed.length} knapsack_pipeline_wasm_ms=${pipeK.toFixed(3)} placed=${placedK.length} greedy_wasm_ms=${wasmSlice.toFixed(3)} greedy_wasm_with_push_ms=${wasmPushSlice.toFixed(3)} greedy_js_ms=${js.toFixed(3)}`);
  for (const h of [items, scorer, pipeline, budget, plain, greedy, sliceBudget]) h.dispose();
}
