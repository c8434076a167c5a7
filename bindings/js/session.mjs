import { load } from "libcupel";

const cupel = await load();
const pipeline = cupel.pipeline({ scorer: cupel.scorers.recency(), slicer: cupel.greedy(), placer: cupel.chronological() });
const session = cupel.session(pipeline); // it keeps its own copy of the pipeline
const budget = cupel.budget({ maxTokens: 1000 });
const turns = [["My login fails."], ["Which error do you see?", "It says 'token expired'."], ["Clear your cookies.", "Done, same error."]];
const history = [{ tokens: 300, content: "You are a support agent.", pinned: true, key: 1, timestamp: 0 }];
for (const [t, messages] of turns.entries()) {
  // The key names a message from one turn's list to the next.
  for (const text of messages) history.push({ tokens: 150, content: text, key: history.length + 1, timestamp: history.length });
  // This turn's retrieved document changes every turn: volatile, so it goes last.
  const doc = { tokens: 200, kind: "Document", content: `search results ${t + 1}`, volatile: true, timestamp: 100 };
  const items = cupel.items([...history, doc]);
  const { placed } = session.run(items, budget);
  console.log(`turn ${t + 1}: ${session.lastAction.padEnd(7)} placed [${placed}], stable prefix ${JSON.stringify(session.stablePrefix)}`);
  console.log(`  breakpoints: ${session.breakpoints.map((b) => `${b.mark} after ${b.items} (${b.tokens} tokens)`).join(", ")}`);
  items.dispose();
}
session.reset(); // the next run is a first run again
console.log(`after reset: ${session.lastAction}, ${session.breakpoints.length} breakpoints`);
for (const h of [session, pipeline, budget]) h.dispose();
