import { compare, describeTest as describe } from "../../evals/index.ts";
import type { Command } from "../cli.ts";
import { metricTolerances, numberOption, openStore, parseCommandArgs, readRun } from "../eval-runs.ts";

const usage = `evalrx compare <a> <b> [--tolerance 0.03] [--metric pass=0.03 ...] [--alpha 0.05] [--strict] [--store DIR] [--json]

  Compares run <b> against run <a> (the baseline) on the cases both hold unchanged, metric by metric:
  difference, interval, test and p-value. Without a tolerance nothing is judged (exit 0); with one,
  the verdict and exit code are the gate's (0 pass/inconclusive, 1 fail, 2 inconclusive under --strict).`;

export const command: Command = {
  summary: "compare two runs paired on their shared cases: differences, intervals, p-values",
  usage,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        tolerance: { type: "string" },
        metric: { type: "string", multiple: true },
        alpha: { type: "string" },
        strict: { type: "boolean" },
        bootstrap: { type: "string" },
        store: { type: "string" },
        json: { type: "boolean" },
      },
      usage,
    );
    if (positionals.length !== 2) throw new Error(`expected two runs (baseline, candidate), got ${positionals.length}`);
    const tolerance = numberOption("tolerance", values.tolerance, "0.03");
    const gated = metricTolerances(tolerance, values.metric);
    const store = await openStore(values.store);
    const a = await readRun(store, positionals[0]!);
    const b = await readRun(store, positionals[1]!);
    const result = compare(a, b, {
      ...(gated.tolerance !== undefined ? { tolerance: gated.tolerance } : {}),
      ...(gated.metrics.length ? { metrics: gated.metrics } : {}),
      ...(values.alpha !== undefined ? { alpha: numberOption("alpha", values.alpha, "0.05")! } : {}),
      ...(values.bootstrap !== undefined ? { bootstrap: numberOption("bootstrap", values.bootstrap, "2000")! } : {}),
      strict: values.strict ?? false,
    });
    if (values.json) console.log(JSON.stringify(result, null, 2));
    else
      console.log(
        [
          `${result.verdict ? `${result.verdict.toUpperCase()} (exit ${result.exitCode})` : "COMPARED (no tolerance: nothing judged)"} — ${b.id} against ${a.id} on ${result.comparison.cases.shared} shared case(s)`,
          ...result.comparison.tests.map((t) => `  ${t.gated ? "" : "(exploratory) "}${describe(t)}`),
          ...result.warnings.map((w) => `  warning: ${w}`),
        ].join("\n"),
      );
    return result.exitCode ?? 0;
  },
};
