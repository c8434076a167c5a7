// OpenTelemetry spans from a pipeline's runs (cupel.otel.instrument), on
// the SDK's InMemorySpanExporter. The packages are pinned in otel/ beside
// this file (package.json and its lockfile); tests/js_binding.rs installs
// them with `npm ci` into target/ and passes CUPEL_OTEL_NODE_MODULES (that
// node_modules) and NODE_PATH (the same, so that index.js finds
// @opentelemetry/api as a host's require would). Without them (a bare
// `node --test`), the tests are skipped loudly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { load, CupelError, Status, TraceLevel } from "../index.js";

const modules = process.env.CUPEL_OTEL_NODE_MODULES;
const SKIP = "*** SKIPPED: CUPEL_OTEL_NODE_MODULES not set (cargo test --test js_binding installs @opentelemetry/api and sdk-trace-base) ***";

const cupel = await load();

const FIXTURE = [
  { tokens: 100, score: 0.9, kind: "Message", content: "alpha", timestamp: 1000 },
  { tokens: 200, score: 0.5, kind: "Document", content: "beta", timestamp: 2000 },
  { tokens: 50, score: 0.1, kind: "ToolOutput", content: "gamma", timestamp: 3000 },
];

/** The SDK, from the installed node_modules: { api, provider, exporter }. */
function sdk() {
  const require = createRequire(join(modules, "resolve-from-here.js"));
  const api = require("@opentelemetry/api");
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base");
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { api, provider, exporter };
}

function fixture() {
  const recency = cupel.scorers.recency();
  const greedy = cupel.greedy();
  const placer = cupel.chronological();
  const pipeline = cupel.pipeline({ scorer: recency, slicer: greedy, placer });
  for (const h of [recency, greedy, placer]) h.dispose();
  const items = cupel.items(FIXTURE);
  const budget = cupel.budget({ maxTokens: 300, targetTokens: 250 });
  return { pipeline, items, budget, dispose: () => [pipeline, items, budget].forEach((h) => h.dispose()) };
}

const ns = ([s, n]) => BigInt(s) * 1_000_000_000n + BigInt(n);
const STAGES = ["classify", "score", "deduplicate", "slice", "place"];

test("instrument: a cupel.pipeline span with five stage children, their attributes and events (Full)", async (t) => {
  if (!modules) return t.skip(SKIP);
  const { api, provider, exporter } = sdk();
  const f = fixture();
  assert.equal(await cupel.otel.instrument(f.pipeline, { level: TraceLevel.Full, tracerProvider: provider }), f.pipeline);
  // Loaded lazily from the host's modules: the same @opentelemetry/api.
  assert.equal(cupel.otel.api.trace, api.trace);
  const before = BigInt(Date.now()) * 1_000_000n;
  assert.deepEqual(f.pipeline.run(f.items, f.budget).placed, [1, 2]);
  const after = BigInt(Date.now() + 1) * 1_000_000n;
  const spans = exporter.getFinishedSpans();
  assert.equal(spans.length, 6);
  const root = spans.find((s) => s.name === "cupel.pipeline");
  assert.equal(root.parentSpanContext, undefined, "a root: no span was active");
  assert.equal(root.instrumentationScope.name, "cupel");
  assert.equal(root.instrumentationScope.version, cupel.version);
  assert.deepEqual(root.attributes, { "cupel.budget.max_tokens": 300, "cupel.verbosity": "Full" });
  const stages = spans.filter((s) => s.name !== "cupel.pipeline");
  assert.deepEqual(stages.map((s) => s.name), STAGES.map((s) => `cupel.stage.${s}`));
  for (const s of stages) {
    assert.equal(s.parentSpanContext.spanId, root.spanContext().spanId);
    assert.equal(s.spanContext().traceId, root.spanContext().traceId);
  }
  assert.deepEqual(
    stages.map((s) => s.attributes),
    [
      [3, 3, 0],
      [3, 3, 0],
      [3, 3, 0],
      [3, 2, 1],
      [2, 2, 0],
    ].map(([i, o, x], k) => ({
      "cupel.stage.name": STAGES[k],
      "cupel.stage.item_count_in": i,
      "cupel.stage.item_count_out": o,
      "cupel.exclusion.count": x,
    })),
  );
  const slice = stages[3];
  assert.deepEqual(
    slice.events.map((e) => [e.name, e.attributes]),
    [["cupel.exclusion", { "cupel.exclusion.reason": "BudgetExceeded", "cupel.exclusion.item_kind": "Message", "cupel.exclusion.item_tokens": 100 }]],
  );
  const place = stages[4];
  assert.deepEqual(
    place.events.map((e) => [e.name, e.attributes["cupel.item.kind"], e.attributes["cupel.item.tokens"]]),
    [
      ["cupel.item.included", "Document", 200],
      ["cupel.item.included", "ToolOutput", 50],
    ],
  );
  for (const e of place.events) assert.equal(typeof e.attributes["cupel.item.score"], "number");
  for (const s of stages.slice(0, 3)) assert.equal(s.events.length, 0);
  // The host's times: every span the run's start and end.
  for (const s of spans) {
    assert.ok(ns(s.startTime) >= before && ns(s.endTime) <= after, `${s.name} within the run`);
    assert.deepEqual([s.startTime, s.endTime], [root.startTime, root.endTime]);
  }
  for (const s of stages) for (const e of s.events) assert.deepEqual(e.time, root.endTime);
  f.dispose();
});

test("levels: Stages has no exclusion count and no events; Exclusions the count and the exclusions only", async (t) => {
  if (!modules) return t.skip(SKIP);
  const { provider, exporter } = sdk();
  const f = fixture();
  await cupel.otel.instrument(f.pipeline, { tracerProvider: provider }); // the default level: Stages
  f.pipeline.run(f.items, f.budget);
  let spans = exporter.getFinishedSpans();
  assert.equal(spans.length, 6);
  assert.equal(spans.find((s) => s.name === "cupel.pipeline").attributes["cupel.verbosity"], "StageOnly");
  for (const s of spans.filter((s) => s.name !== "cupel.pipeline")) {
    assert.deepEqual(Object.keys(s.attributes), ["cupel.stage.name", "cupel.stage.item_count_in", "cupel.stage.item_count_out"]);
    assert.equal(s.events.length, 0);
  }
  exporter.reset();
  await cupel.otel.instrument(f.pipeline, { level: TraceLevel.Exclusions, tracerProvider: provider });
  f.pipeline.run(f.items, f.budget);
  spans = exporter.getFinishedSpans();
  assert.equal(spans.find((s) => s.name === "cupel.pipeline").attributes["cupel.verbosity"], "StageAndExclusions");
  assert.deepEqual(spans.flatMap((s) => s.events.map((e) => `${s.name} ${e.name}`)), ["cupel.stage.slice cupel.exclusion"]);
  assert.equal(spans.find((s) => s.name === "cupel.stage.slice").attributes["cupel.exclusion.count"], 1);
  // Cleared: no more spans.
  exporter.reset();
  f.pipeline.clearTrace();
  f.pipeline.run(f.items, f.budget);
  assert.equal(exporter.getFinishedSpans().length, 0);
  f.dispose();
});

test("the span active during the run is the parent; the global tracer provider by default", async (t) => {
  if (!modules) return t.skip(SKIP);
  const { api, provider, exporter } = sdk();
  // A synchronous context manager: a stack.
  const stack = [api.ROOT_CONTEXT];
  api.context.setGlobalContextManager({
    active: () => stack.at(-1),
    with(context, fn, thisArg, ...args) {
      stack.push(context);
      try {
        return fn.call(thisArg, ...args);
      } finally {
        stack.pop();
      }
    },
    bind: (context, target) => target,
    enable() {
      return this;
    },
    disable() {
      return this;
    },
  });
  api.trace.setGlobalTracerProvider(provider);
  const f = fixture();
  await cupel.otel.instrument(f.pipeline, { level: TraceLevel.Stages });
  const host = api.trace.getTracer("host");
  host.startActiveSpan("handle request", (span) => {
    f.pipeline.run(f.items, f.budget);
    span.end();
  });
  const spans = exporter.getFinishedSpans();
  const request = spans.find((s) => s.name === "handle request");
  const root = spans.find((s) => s.name === "cupel.pipeline");
  assert.equal(root.parentSpanContext.spanId, request.spanContext().spanId);
  assert.equal(root.spanContext().traceId, request.spanContext().traceId);
  // Sessions made from the pipeline, and policy sensitivity, make spans too.
  exporter.reset();
  const session = cupel.session(f.pipeline);
  session.run(f.items, f.budget);
  const chat = cupel.preset("Chat");
  await cupel.otel.instrument(chat, { api, tracerProvider: provider });
  cupel.policySensitivity([["recency", f.pipeline], ["chat", chat]], f.items, f.budget);
  const roots = exporter.getFinishedSpans().filter((s) => s.name === "cupel.pipeline");
  assert.equal(roots.length, 3);
  assert.equal(exporter.getFinishedSpans().length, 18);
  session.dispose();
  chat.dispose();
  f.dispose();
  api.trace.disable();
  api.context.disable();
});

test("instrument's arguments, and @opentelemetry/api missing", async (t) => {
  if (!modules) return t.skip(SKIP);
  const { api, provider } = sdk();
  const f = fixture();
  const rejects = (promise, Class, re) => assert.rejects(promise, (e) => e.constructor === Class && e instanceof CupelError && re.test(e.message));
  await rejects(cupel.otel.instrument(null), TypeError, /^pipeline is null; expected a Pipeline$/);
  await rejects(cupel.otel.instrument(f.items), TypeError, /^pipeline is an Items list|^pipeline is an Items; expected a Pipeline/);
  await rejects(cupel.otel.instrument(f.pipeline, { level: 7 }), RangeError, /^options\.level is 7/);
  await rejects(cupel.otel.instrument(f.pipeline, { api: {} }), TypeError, /^options\.api is an object; expected the @opentelemetry\/api module$/);
  await rejects(cupel.otel.instrument(f.pipeline, { api, tracerProvider: {} }), TypeError, /^options\.tracerProvider is an object; expected a TracerProvider$/);
  await rejects(cupel.otel.instrument(f.pipeline, 3), TypeError, /^options is 3/);
  // With the API given, nothing is loaded.
  const other = await load();
  const p = other.preset("Chat");
  await other.otel.instrument(p, { api, tracerProvider: provider });
  assert.equal(other.otel.api, null);
  p.dispose();
  f.dispose();
  // A process that cannot find @opentelemetry/api: CupelError (UNSUPPORTED) saying what to install.
  const index = fileURLToPath(new URL("../index.js", import.meta.url));
  const script = `
    const { load } = await import(${JSON.stringify(index)});
    const cupel = await load();
    const p = cupel.preset("Chat");
    try { await cupel.otel.instrument(p); console.log("no error"); }
    catch (e) { console.log(JSON.stringify([e.constructor.name, e.status, e.message])); }`;
  const env = { ...process.env };
  delete env.NODE_PATH;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { env, encoding: "utf8" });
  const [name, status, message] = JSON.parse(out);
  assert.equal(name, "CupelError");
  assert.equal(status, Status.UNSUPPORTED);
  assert.match(message, /^UNSUPPORTED: @opentelemetry\/api is not installed \(an optional peer dependency of libcupel\): npm install @opentelemetry\/api, or pass it as options\.api/);
});
