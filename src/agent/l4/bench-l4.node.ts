/**
 * `npm run bench:l4 [-- --seeds 3] [--data FILE] [--min-tier L4] [--method layer|head]` (`-- --page [--sample 200]`: L4 in the page against Node instead): `investigate --max-tier L4` on planted-vlm once per seed (the
 * seed moves the holdout split and every resampling), tallying what M5's L4 rung — the head adapter, trained on
 * the exploration split and validated on the sealed cases like every rung — did: reached (no lower rung
 * validated), fixed > broken, validated (paired test, yes-bias control, no-free-lunch), and the no-free-lunch
 * slices. One line per seed, then the shares; the load average is printed beside the times.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { ImagePixels } from "../../core/index.ts";
import { importDataset } from "../../datasets/index.ts";
import { yesNo } from "../../evals/index.ts";
import { toRgb } from "../../models/image.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import { FileStore } from "../../store/files.node.ts";
import { memoised } from "../bench/mechanism.node.ts";
import { investigate } from "../investigate.ts";
import { nodeHeadAdapter } from "./executor.node.ts";
import type { HeadAdapterCandidate, L4Method } from "./executor.ts";
import { TIERS, type Tier } from "../repair.ts";

function rgba(bytes: Uint8Array): ImagePixels {
  const { width, height, rgb } = toRgb(bytes);
  const data = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    data.set([rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!, 255], i * 4);
  }
  return { width, height, data };
}

const { values } = parseArgs({
  options: {
    seeds: { type: "string" },
    "seed-offset": { type: "string" },
    data: { type: "string" },
    page: { type: "boolean" },
    sample: { type: "string" },
    "min-tier": { type: "string" },
    method: { type: "string" },
  },
});
const minTier = (values["min-tier"] ?? "L1") as Tier;
if (!TIERS.includes(minTier)) throw new Error(`--min-tier: expected one of ${TIERS.join(", ")}, got '${minTier}'`);
const method = (values.method ?? "layer") as L4Method;
if (method !== "layer" && method !== "head") throw new Error(`--method: expected layer or head, got '${method}'`);
if (values.page) {
  // L4 in the page (WASM) against Node, side by side (bench-l4-page.node.ts).
  const { benchL4Page } = await import("./bench-l4-page.node.ts");
  await benchL4Page(Number(values.sample ?? 200));
  process.exit(0);
}
const seeds = Array.from({ length: Number(values.seeds ?? 3) }, (_, i) => i + 1 + Number(values["seed-offset"] ?? 0));
const dataPath = resolve(values.data ?? join(REPO_ROOT, "public/demo/pope.jsonl"));
const cases = (await importDataset(new Uint8Array(readFileSync(dataPath)), { name: "pope.jsonl" })).cases;
const folder = join(REPO_ROOT, "models/planted-vlm");
const model = memoised(await loadModel(folder));
const images = async (ref: string) => new Uint8Array(readFileSync(resolve(dirname(dataPath), ref)));
let reached = 0,
  moreFixed = 0,
  validated = 0,
  guardHeld = 0;
const t0 = performance.now();
for (const seed of seeds) {
  const dir = mkdtempSync(join(tmpdir(), "evalrx-bench-l4-"));
  const made: HeadAdapterCandidate[] = [];
  let guard: { holds: boolean; note: string } | undefined;
  try {
    const { report } = await investigate({
      store: await FileStore.open(join(dir, "store")),
      model,
      dataset: { id: "pope", cases, source: "pope.jsonl", fingerprint: "bench-l4" },
      evaluators: [yesNo()],
      images,
      decodeImage: rgba,
      protocol: { question: "What predicts the hallucinations?" },
      runId: `bench-l4-${seed}`,
      seed,
      minTier,
      maxTier: "L4",
      // The no-free-lunch result is in the event log beside the candidate's test.
      sink: (e) => {
        if (e.type === "repair.tested" && e.payload["tier"] === "L4") guard = e.payload["noFreeLunch"] as typeof guard;
      },
      l4: (pool) => {
        const c = nodeHeadAdapter({ ...pool, folder, out: join(dir, "l4"), images, method });
        made.push(c);
        return c;
      },
    });
    const row = report.repairs?.candidates.find((c) => c.tier === "L4");
    const trained = made[0]?.training();
    const training = trained && "weights" in trained ? trained : undefined;
    if (made[0]?.failure()) console.log(`seed ${seed}: ${made[0].failure()}`);
    if (!row) {
      console.log(`seed ${seed}: L4 not reached (fixed by ${report.repairs?.fixedBy ?? "—"})`);
      continue;
    }
    reached++;
    if (row.fixed > row.broken) moreFixed++;
    if (row.validated) validated++;
    if (guard?.holds) guardHeld++;
    console.log(
      `seed ${seed}: L4 fixed ${row.fixed}, broke ${row.broken} of ${row.n} (p = ${row.p?.toPrecision(3)}, γ = ${row.gamma?.toPrecision(3)}, control ${row.control ? `${row.control.fixed}/${row.control.broken} beaten ${row.control.beaten}` : "—"}) validated ${row.validated}; no-free-lunch ${guard ? `${guard.holds ? "held" : "FAILED"}: ${guard.note}` : "—"}; loss ${training?.initialLoss.toFixed(3)} → ${training?.finalLoss.toFixed(3)} on ${training?.pool.cases} pool cases, ${((training?.ms ?? 0) / 1000).toFixed(1)} s`,
    );
  } finally {
    await Promise.all(made.map((c) => c.dispose()));
    rmSync(dir, { recursive: true, force: true });
  }
}
await model.dispose();
const n = seeds.length;
console.log(
  `planted-vlm, ${method} adapter, ladder from ${minTier}, ${n} seeds, ${cases.length} cases: L4 reached ${reached}/${n}; fixed > broken ${moreFixed}/${reached}; validated ${validated}/${reached}; no-free-lunch held ${guardHeld}/${reached}; ${((performance.now() - t0) / 1000 / n).toFixed(0)} s per seed (load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")})`,
);
