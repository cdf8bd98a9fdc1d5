/**
 * `npm run bench:stats`: our pairedBootstrap against the same computation in vectorised
 * NumPy, on the same inputs, in one run. 10,000 cases × 2,000 replicates, unclustered and
 * with 1,000 clusters. Each side is timed in its own process (JS here, NumPy inside Python
 * via bench_numpy.py) as the median of several repeats after a warm-up; the ratio is
 * ours/NumPy (targets: ≤ 1.0 unclustered, ≤ 1.5 clustered).
 */
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { pairedBootstrap } from "../paired-bootstrap.ts";

const CASES = 10_000;
const CLUSTERS = 1_000;
const REPLICATES = 2_000;
const REPEATS = Number(process.env.BENCH_REPEATS ?? 9);
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

function timeJs(run: () => unknown): number {
  run(); // warm-up: let the JIT optimise before timing
  const times: number[] = [];
  for (let k = 0; k < REPEATS; k++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  return median(times);
}

const jsPlain = timeJs(() => pairedBootstrap(diffs, undefined, { replicates: REPLICATES, seed: 1 }));
const jsClustered = timeJs(() => pairedBootstrap(diffs, clusters, { replicates: REPLICATES, seed: 1 }));

const here = dirname(fileURLToPath(import.meta.url));
const spec = JSON.stringify({
  diffs: Array.from(diffs),
  clusters: Array.from(clusters),
  replicates: REPLICATES,
  repeats: REPEATS,
});
const py = JSON.parse(
  execFileSync(PYTHON, [join(here, "bench_numpy.py")], { input: spec, encoding: "utf8", maxBuffer: 1 << 26 }),
) as { numpy: string; unclustered_ms: number; clustered_ms: number };

const fmt = (ms: number) => `${ms.toFixed(1).padStart(7)} ms`;
console.log(`pairedBootstrap, ${CASES} cases × ${REPLICATES} replicates (median of ${REPEATS}; NumPy ${py.numpy})`);
console.log(
  `  unclustered            ours ${fmt(jsPlain)}   numpy ${fmt(py.unclustered_ms)}   ours/numpy ${(jsPlain / py.unclustered_ms).toFixed(2)}  (target ≤ 1.0)`,
);
console.log(
  `  ${CLUSTERS} clusters          ours ${fmt(jsClustered)}   numpy ${fmt(py.clustered_ms)}   ours/numpy ${(jsClustered / py.clustered_ms).toFixed(2)}  (target ≤ 1.5)`,
);
console.log(`JS-only medians: unclustered ${fmt(jsPlain)}, clustered ${fmt(jsClustered)}`);
