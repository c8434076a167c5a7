import { load } from "libcupel";

const cupel = await load();
console.log(cupel.presetNames.join(", "));
for (const name of ["chat", "DocumentQa", "AgentLoop"]) {
  const preset = cupel.preset(name); // matched case-insensitively
  const { scorers, slicerType, placerType } = preset.toObject();
  console.log(`${name}: ${scorers.map((s) => `${s.type} ${s.weight}`).join(", ")}; ${slicerType}, ${placerType}`);
  preset.dispose();
}
try {
  cupel.preset("Default");
} catch (e) {
  console.log(`${e.name}: ${e.message}`);
}
