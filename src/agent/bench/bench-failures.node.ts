// npm run bench:failures — finding more failures (issue 17): probe search on the bundled VLM within 2,000
// model calls (its failure rate against the seeds'), the text probes on tiny-lm likewise, and failure-mode clustering on planted data over 20 seeds
// (adjusted Rand index by effect size; one mode never split in two).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { adjustedRand } from "../modes/adjusted-rand.ts";
import { failureModes } from "../modes/failure-modes.ts";
import { plantedModes } from "../modes/planted-modes.ts";
import { searchTextProbes } from "../probes/text-probes.ts";
import { searchSceneProbes } from "../probes/vlm-probes.ts";
import { toRgb } from "../../models/image.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";

const demo = join(REPO_ROOT, "public/demo");
const rows = readFileSync(join(demo, "pope.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as { id: string; input: { prompt: string; image: string } });
const seeds = rows.slice(0, 100).map((r) => ({
  id: r.id,
  prompt: r.input.prompt,
  image: toRgb(new Uint8Array(readFileSync(join(demo, r.input.image)))),
}));
const model = await loadModel("tiny-vlm");
const started = performance.now();
const r = await searchSceneProbes({ seeds, model, budget: 2000, seed: 1 });
await model.dispose();
const seedRate = r.seedFailures / r.seedCalls;
const parents = new Set(r.search.found.map((c) => c.provenance.parent)).size;
console.log(
  `probe search on tiny-vlm, 2000 model calls (100 seeds asked once, then ${r.search.calls} variants) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
console.log(
  `  seeds fail ${r.seedFailures}/${r.seedCalls} = ${seedRate.toFixed(3)}; variants fail ${r.search.failures}/${r.search.calls} = ${r.rate.toFixed(3)} → ${r.lift.toFixed(2)}× (target ≥ 3×); from ${parents} distinct seeds`,
);
for (const f of r.search.families)
  console.log(
    `  ${f.family.padEnd(11)} ${String(f.failures).padStart(5)} / ${String(f.calls).padEnd(5)} ${f.calls ? (f.failures / f.calls).toFixed(2) : "—"}`,
  );

// The text probes on tiny-lm: every demo reversal case as a seed (lengths 2–14; the model fails those over 8).
const lmRows = readFileSync(join(demo, "tiny-lm.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as { id: string; input: { prompt: string } });
const lm = await loadModel("tiny-lm");
const lmStarted = performance.now();
const t = await searchTextProbes({
  seeds: lmRows.map((r) => ({ id: r.id, prompt: r.input.prompt })),
  model: lm,
  budget: 2000,
  seed: 1,
});
await lm.dispose();
console.log(
  `text probe search on tiny-lm, 2000 model calls (${t.seedCalls} seeds asked once, then ${t.search.calls} variants) in ${((performance.now() - lmStarted) / 1000).toFixed(1)} s`,
);
console.log(
  `  seeds fail ${t.seedFailures}/${t.seedCalls} = ${(t.seedFailures / t.seedCalls).toFixed(3)}; variants fail ${t.search.failures}/${t.search.calls} = ${t.rate.toFixed(3)} → ${t.lift.toFixed(2)}×; from ${new Set(t.search.found.map((c) => c.provenance.parent)).size} distinct seeds`,
);
for (const a of t.search.arms)
  console.log(
    `  ${`${a.family}:${a.arm}`.padEnd(28)} ${String(a.failures).padStart(5)} / ${String(a.calls).padEnd(5)} ${a.calls ? (a.failures / a.calls).toFixed(2) : "—"}`,
  );

for (const shift of [2, 2.5, 3, 3.5]) {
  const aris: number[] = [];
  let two = 0;
  for (let seed = 1; seed <= 20; seed++) {
    const { table, signals, truth } = plantedModes({ seed, shift });
    const found = failureModes(table, signals, { seed });
    if (found.k === 2) two++;
    const modeOf = new Map<string, string>();
    for (const m of found.modes) for (const id of m.caseIds) modeOf.set(id, m.id);
    const failing = table.ids.filter((_, i) => table.failed[i]);
    aris.push(
      adjustedRand(
        truth.filter((t) => t !== "pass"),
        failing.map((id) => modeOf.get(id)!),
      ),
    );
  }
  const mean = aris.reduce((s, a) => s + a, 0) / aris.length;
  console.log(
    `failure modes, two planted at ${shift} SD, 20 seeds: k = 2 in ${two}/20; ARI mean ${mean.toFixed(3)}, min ${Math.min(...aris).toFixed(3)} (target ≥ 0.8)`,
  );
}
for (const [label, options] of [
  ["one planted mode", { modeSizes: [80] }],
  ["failures unrelated to any signal", { modeSizes: [], background: 80 }],
] as const) {
  let split = 0;
  for (let seed = 1; seed <= 20; seed++)
    if (
      failureModes(plantedModes({ seed, ...options }).table, plantedModes({ seed, ...options }).signals, { seed }).k > 1
    )
      split++;
  console.log(`failure modes, ${label}, 20 seeds: reported as more than one mode in ${split}/20 (target 0)`);
}
