import { calibrate } from "../../evals/index.ts";
import type { Command } from "../cli.ts";
import { numberOption, openStore, parseCommandArgs, pct, readRun } from "../eval-runs.ts";

const usage = `evalrx calibrate <run> <run> [<run> ...] [--target 0.03] [--simulations 200] [--alpha 0.05] [--store DIR] [--json]

  The A/A noise floor from two or more runs of the same eval and code: the tolerance 95% of A/A comparisons
  pass at for 1, 2, 3, 5 repeats, the repeats the target tolerance needs, the flaky share and flip rate.`;

export const command: Command = {
  summary: "measure an eval's A/A noise floor and recommend repeats and a tolerance",
  usage,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        target: { type: "string" },
        simulations: { type: "string" },
        alpha: { type: "string" },
        bootstrap: { type: "string" },
        store: { type: "string" },
        json: { type: "boolean" },
      },
      usage,
    );
    const store = await openStore(values.store);
    const runs = [];
    for (const ref of positionals) runs.push(await readRun(store, ref));
    const target = numberOption("target", values.target, "0.03");
    const simulations = numberOption("simulations", values.simulations, "200");
    if (simulations !== undefined && !(Number.isInteger(simulations) && simulations >= 1))
      throw new Error(`--simulations ${values.simulations} must be a whole number ≥ 1; e.g. --simulations 200`);
    const result = calibrate(runs, {
      ...(target !== undefined ? { target } : {}),
      ...(simulations !== undefined ? { simulations } : {}),
      ...(values.alpha !== undefined ? { alpha: numberOption("alpha", values.alpha, "0.05")! } : {}),
      ...(values.bootstrap !== undefined ? { bootstrap: numberOption("bootstrap", values.bootstrap, "2000")! } : {}),
    });
    if (values.json) console.log(JSON.stringify(result, null, 2));
    else
      console.log(
        [
          `calibration of eval ${result.eval} from ${result.runs.length} runs, ${result.cases} shared cases, ${result.repeats} repeat(s) each`,
          `flaky cases ${pct(result.flakyShare)}, flip rate ${pct(result.flipRate)}`,
          "repeats  A/A tolerance (95% pass)" + (target !== undefined ? `  A/A pass at ${pct(target)}` : ""),
          ...result.rows.map(
            (r) =>
              `${String(r.repeats).padStart(7)}  ${pct(r.tolerance).padStart(24)}` +
              (r.aaPassAtTarget !== undefined ? `  ${pct(r.aaPassAtTarget).padStart(14)}` : ""),
          ),
          result.recommendedRepeats !== null
            ? `recommended: ${result.recommendedRepeats} repeat(s), tolerance ${pct(result.suggestedTolerance!)}`
            : "recommended: none of the tabulated repeats reaches the target",
          ...result.notes.map((n) => `  note: ${n}`),
          ...result.warnings.map((w) => `  warning: ${w}`),
        ].join("\n"),
      );
    return 0;
  },
};
