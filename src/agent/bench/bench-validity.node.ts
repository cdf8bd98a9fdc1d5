/**
 * `npm run bench:validity`: over many seeds of synthetic planted-signal and
 * null eval logs, the share of planted signals confirmed (target ≥ 0.9) and the
 * share of null signals confirmed (target ≤ 0.05), with the wall time per
 * investigation, and the power curve over effect size and sample size.
 * Usage: tsx src/agent/bench/bench-validity.node.ts [seeds=60]
 */
import { CALIBRATORS } from "../evalue.ts";
import { validity } from "./validity.ts";

const count = Number(process.argv[2] ?? 60);
if (!Number.isInteger(count) || count < 1)
  throw new Error(`bench:validity: seeds ${process.argv[2]} must be a whole number ≥ 1`);
const seeds = (from: number) => Array.from({ length: count }, (_, i) => from + i);

const rows: string[][] = [];
const row = (label: string, t: Awaited<ReturnType<typeof validity>>, planted: boolean) => {
  rows.push([
    label,
    String(t.runs),
    planted ? (t.plantedSupported / t.runs).toFixed(3) : "—",
    (t.noiseSupported / t.noiseTried).toFixed(4),
    (t.runsWithFalseSupport / t.runs).toFixed(3),
    t.msPerRun.toFixed(0),
  ]);
  console.error(`  done: ${label}`);
};

console.error(`bench:validity over ${count} seeds per setting (explore: e-BH at α = 0.05, holdout 0.4)`);
row("planted  n=600  log-odds 1.0/SD", await validity(seeds(10_000), { n: 600, effect: 1 }), true);
row("null     n=600", await validity(seeds(20_000), { n: 600, effect: 0 }), false);
row("planted  n=600  log-odds 0.5/SD", await validity(seeds(30_000), { n: 600, effect: 0.5 }), true);
row("planted  n=300  log-odds 1.0/SD", await validity(seeds(40_000), { n: 300, effect: 1 }), true);
row("planted  n=600  clusters of 3", await validity(seeds(50_000), { n: 600, effect: 1, clusterSize: 3 }), true);
row("null     n=600  clusters of 3", await validity(seeds(60_000), { n: 600, effect: 0, clusterSize: 3 }), false);
// Side by side: the same planted logs with the single calibrator 1/(2√p) instead of the mixture.
const sqrt = { explore: 50, sealed: 300 };
row(
  "planted  n=600  log-odds 0.5/SD  [1/(2√p)]",
  await validity(seeds(30_000), { n: 600, effect: 0.5 }, sqrt, CALIBRATORS.sqrt),
  true,
);
row(
  "planted  n=300  log-odds 1.0/SD  [1/(2√p)]",
  await validity(seeds(40_000), { n: 300, effect: 1 }, sqrt, CALIBRATORS.sqrt),
  true,
);

const head = ["setting", "runs", "planted confirmed", "null signals confirmed", "runs with a false confirm", "ms/run"];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const fmt = (r: string[]) => r.map((x, i) => x.padEnd(widths[i]!)).join("  ");
console.log(fmt(head));
for (const r of rows) console.log(fmt(r));
const main = rows[0]!,
  nul = rows[1]!;
const ratio = (a: string[], b: string[]) => (Number(a[2]) / Math.max(1e-9, Number(b[2]))).toFixed(2);
console.log(
  `power ratio mixture / 1/(2√p): log-odds 0.5 n=600 → ${ratio(rows[2]!, rows[6]!)}×; log-odds 1.0 n=300 → ${ratio(rows[3]!, rows[7]!)}×`,
);
console.log(
  `targets: planted confirmed ≥ 0.9 → ${main[2]} ${Number(main[2]) >= 0.9 ? "ok" : "MISSED"}; ` +
    `null confirmed ≤ 0.05 → ${nul[3]} ${Number(nul[3]) <= 0.05 ? "ok" : "MISSED"}`,
);
