import { Gate, gate, type GateInit, type GateResult } from "../../evals/index.ts";
import type { Command } from "../cli.ts";
import {
  metricTolerances,
  numberOption,
  openStore,
  pairsOption,
  parseCommandArgs,
  readBaseline,
  readRun,
} from "../eval-runs.ts";

const usage = `evalrx gate <run> [--baseline <run|latest>] [--tolerance 0.03] [--metric pass=0.03 ...]
                   [--threshold 0.8 | --threshold yesNo=0.8 ...] [--strict] [--must-pass-tag critical|none]
                   [--max-error-rate 0.05] [--alpha 0.05] [--bootstrap 2000] [--store DIR] [--json]

  <run>             a run id in the store (--store, default .evalrx/) or a run file exported from the page
  --baseline        compare with this run, or the last finished run of the same eval ("latest")
  --tolerance       how large a drop matters (every gated metric); --metric NAME=TOL gates NAME with its own
  --threshold       an absolute floor: a number for the pass rate, or METRIC=FLOOR (repeatable)
  --strict          an inconclusive comparison exits 2 instead of 0

Exit codes: 0 pass (or inconclusive), 1 fail, 2 inconclusive under --strict, 3 error (bad input, error budget).`;

/** The human summary: the verdict, each reason (test, interval), and warnings. */
export function formatGate(r: GateResult): string {
  const base = r.comparison ? ` against baseline ${r.comparison.baseline}` : "";
  return [
    `${r.verdict.toUpperCase()} (exit ${r.exitCode}) — run ${r.run}${base}`,
    ...r.reasons.map((x) => `  ${x}`),
    ...r.warnings.map((x) => `  warning: ${x}`),
  ].join("\n");
}

export const command: Command = {
  summary: "decide a run: thresholds, a baseline with a tolerance, must-pass cases, an error budget → exit code",
  usage,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        baseline: { type: "string" },
        tolerance: { type: "string" },
        metric: { type: "string", multiple: true },
        threshold: { type: "string", multiple: true },
        strict: { type: "boolean" },
        "must-pass-tag": { type: "string" },
        "max-error-rate": { type: "string" },
        alpha: { type: "string" },
        bootstrap: { type: "string" },
        store: { type: "string" },
        json: { type: "boolean" },
      },
      usage,
    );
    if (positionals.length !== 1)
      throw new Error(`expected one run, got ${positionals.length}; usage: ${usage.split("\n")[0]}`);
    const tolerance = numberOption("tolerance", values.tolerance, "0.03");
    const thresholds = pairsOption("threshold", values.threshold, "0.8");
    if (thresholds.bare.length > 1)
      throw new Error("--threshold without a metric name is the pass rate's; give it once");
    const threshold: GateInit["threshold"] =
      thresholds.bare.length || Object.keys(thresholds.pairs).length
        ? {
            ...(thresholds.bare.length ? { pass: numberOption("threshold", thresholds.bare[0], "0.8")! } : {}),
            ...thresholds.pairs,
          }
        : undefined;
    const { tolerance: tol, metrics: gated } = metricTolerances(tolerance, values.metric);
    if (values.baseline === undefined && tol !== undefined)
      throw new Error("a tolerance needs a baseline to compare with: add --baseline <run|latest>");
    const mustPass = values["must-pass-tag"];
    const spec = Gate({
      ...(threshold ? { threshold } : {}),
      ...(values.baseline !== undefined ? { baseline: values.baseline } : {}),
      ...(tol !== undefined ? { tolerance: tol } : {}),
      ...(gated.length ? { metrics: gated } : {}),
      ...(mustPass !== undefined ? { mustPassTag: mustPass === "none" ? null : mustPass } : {}),
      ...(values["max-error-rate"] !== undefined
        ? { maxErrorRate: numberOption("max-error-rate", values["max-error-rate"], "0.05")! }
        : {}),
      ...(values.alpha !== undefined ? { alpha: numberOption("alpha", values.alpha, "0.05")! } : {}),
      ...(values.bootstrap !== undefined ? { bootstrap: numberOption("bootstrap", values.bootstrap, "2000")! } : {}),
      strict: values.strict ?? false,
    });
    const store = await openStore(values.store);
    const run = await readRun(store, positionals[0]!);
    const baseline = spec.baseline !== undefined ? await readBaseline(store, run, spec.baseline) : undefined;
    const result = gate(run, spec, baseline);
    console.log(values.json ? JSON.stringify(result, null, 2) : formatGate(result));
    return result.exitCode;
  },
};
