/**
 * `npm run bench:stats`: our pairedBootstrap against the same computation in vectorised
 * NumPy, on the same inputs, in one run. 10,000 cases × 2,000 replicates, unclustered and
 * with 1,000 clusters. Each side is timed in its own process (JS here, NumPy inside Python
 * via bench_numpy.py, which times itself), in alternating rounds after a warm-up; each side's
 * figure is the median over all its runs, and the ratio is ours/NumPy (targets: ≤ 1.0
 * unclustered, ≤ 1.5 clustered). BENCH_ROUNDS / BENCH_REPEATS change the counts.
 */
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { pairedBootstrap } from "../paired-bootstrap.ts";

const CASES = 10_000;
const CLUSTERS = 1_000;
const REPLICATES = 2_000;
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PYTHON = "/usr/bin/python3";

// Inputs: a deterministic mix of 0/1 flips and graded differences, clusters of uneven size.
const diffs = new Float64Array(CASES);
const clusters = new Int32Array(CASES);
let state = 12345;
const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 4294967296;
for (let i = 0; i < CASES; i++) {
  const u = next();
  diffs[i] = u < 0.1 ? -1 : u < 0.18 ? 1 : (next() - 0.5) * 0.2;
  clusters[i] = Math.floor(next() ** 1.5 * CLUSTERS);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function timeJs(run: () => unknown, repeats: number): number[] {
  const times: number[] = [];
  for (let k = 0; k < repeats; k++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  return times;
}

interface NumpyResult {
  numpy: string;
  unclustered_ms: number[];
  clustered_ms: number[];
  unclustered: [number, number, number];
  clustered: [number, number, number];
}

const plainRun = () => pairedBootstrap(diffs, undefined, { replicates: REPLICATES, seed: 1 });
const clusteredRun = () => pairedBootstrap(diffs, clusters, { replicates: REPLICATES, seed: 1 });
const here = dirname(fileURLToPath(import.meta.url));
const spec = JSON.stringify({
  diffs: Array.from(diffs),
  clusters: Array.from(clusters),
  replicates: REPLICATES,
  repeats: REPEATS,
});

// Warm-up (JIT), then ROUNDS alternating rounds of each side, so a change in machine load
// while the benchmark runs hits both sides alike.
plainRun();
clusteredRun();
const js = { plain: [] as number[], clustered: [] as number[] };
const np = { plain: [] as number[], clustered: [] as number[] };
let py: NumpyResult | undefined;
for (let round = 0; round < ROUNDS; round++) {
  js.plain.push(...timeJs(plainRun, REPEATS));
  js.clustered.push(...timeJs(clusteredRun, REPEATS));
  py = JSON.parse(
    execFileSync(PYTHON, [join(here, "bench_numpy.py")], { input: spec, encoding: "utf8", maxBuffer: 1 << 26 }),
  ) as NumpyResult;
  np.plain.push(...py.unclustered_ms);
  np.clustered.push(...py.clustered_ms);
}
const jsPlain = median(js.plain);
const jsClustered = median(js.clustered);
const npPlain = median(np.plain);
const npClustered = median(np.clustered);

const fmt = (ms: number) => `${ms.toFixed(1).padStart(7)} ms`;
console.log(
  `pairedBootstrap, ${CASES} cases × ${REPLICATES} replicates (median of ${ROUNDS}×${REPEATS} alternating runs per side; NumPy ${py!.numpy})`,
);
console.log(
  `  unclustered            ours ${fmt(jsPlain)}   numpy ${fmt(npPlain)}   ours/numpy ${(jsPlain / npPlain).toFixed(2)}  (target ≤ 1.0)`,
);
console.log(
  `  ${CLUSTERS} clusters          ours ${fmt(jsClustered)}   numpy ${fmt(npClustered)}   ours/numpy ${(jsClustered / npClustered).toFixed(2)}  (target ≤ 1.5)`,
);
const show = (r: { lo: number; hi: number; p: number } | [number, number, number]) => {
  const [lo, hi, p] = Array.isArray(r) ? r : [r.lo, r.hi, r.p];
  return `[${lo.toFixed(4)}, ${hi.toFixed(4)}] p=${p.toPrecision(3)}`;
};
console.log(
  `  same answer, different random streams: unclustered ours ${show(plainRun())} numpy ${show(py!.unclustered)}`,
);
console.log(
  `                                         clustered   ours ${show(clusteredRun())} numpy ${show(py!.clustered)}`,
);
console.log(`JS-only medians: unclustered ${fmt(jsPlain)}, clustered ${fmt(jsClustered)}`);
