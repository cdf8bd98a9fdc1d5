import { discordance, metricValue, power, PASS_METRIC, type RunView } from "../../evals/index.ts";
import type { Command } from "../cli.ts";
import { numberOption, openStore, parseCommandArgs, readRun } from "../eval-runs.ts";

const usage = `evalrx power (--drop 0.05 | --n 400) [--tolerance 0.03] [--repeats 1] [--pass-rate 0.8] [--flip-rate 0]
                    [--cluster-size 1] [--icc 0.3] [--alpha 0.05] [--power 0.8] [--simulations 400]
                    [--runs <baseline> <other>] [--discordance 0.1] [--store DIR] [--json]

  The probability that the gate's own rule (its tolerance, repeats, clusters and test) fails a candidate that
  dropped by --drop, by simulating that many gates, and how many cases (or repeats) reach --power.
  --drop alone searches the cases needed; --n alone finds the smallest drop n cases fail with --power.
  --runs measures the baseline's per-case pass rates and clusters from a stored run (and, from the second run of
  the same code, the share of cases the two disagree on); --discordance states that share as the flip rate.`;

/** Each shared case's pass share in the baseline run, its cluster, and whether the run has clusters. */
function caseRates(run: RunView): { rates: number[]; clusters?: string[] } {
  const rates: number[] = [];
  const clusters: string[] = [];
  for (const c of run.cases.values()) {
    const v = metricValue(c, PASS_METRIC);
    if (v === undefined) continue;
    rates.push(v);
    clusters.push(c.cluster ?? `case:${c.id}`);
  }
  if (rates.length === 0) throw new Error(`run '${run.id}' has no case with a verdict: nothing to simulate from`);
  return run.clusterField !== undefined ? { rates, clusters } : { rates };
}

export const command: Command = {
  summary:
    "the gate's power for a drop, by simulating its own rule (tolerance, repeats, clusters), and the cases needed",
  usage,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        drop: { type: "string" },
        n: { type: "string" },
        tolerance: { type: "string" },
        repeats: { type: "string" },
        "pass-rate": { type: "string" },
        "flip-rate": { type: "string" },
        "cluster-size": { type: "string" },
        icc: { type: "string" },
        discordance: { type: "string" },
        runs: { type: "boolean" },
        alpha: { type: "string" },
        power: { type: "string" },
        simulations: { type: "string" },
        store: { type: "string" },
        json: { type: "boolean" },
      },
      usage,
    );
    const drop = numberOption("drop", values.drop, "0.05");
    const n = numberOption("n", values.n, "400");
    if (drop === undefined && n === undefined && !values.runs)
      throw new Error("give --drop 0.05 (cases needed) or --n 400 (detectable drop)");
    let measured: { cases: number; discordance?: number } | undefined;
    let fromRuns: { rates: number[]; clusters?: string[] } | undefined;
    if (values.runs) {
      if (positionals.length < 1 || positionals.length > 2)
        throw new Error(
          `--runs takes a baseline run (and optionally a second run of the same code), got ${positionals.length}`,
        );
      const store = await openStore(values.store);
      const baseline = await readRun(store, positionals[0]!);
      fromRuns = caseRates(baseline);
      measured = { cases: fromRuns.rates.length };
      if (positionals[1])
        measured.discordance = discordance(baseline, await readRun(store, positionals[1])).discordance;
      if (drop === undefined)
        throw new Error(
          "--runs: give --drop 0.05; the cases are the baseline's, so the question is the power for that drop",
        );
    } else if (positionals.length) throw new Error(`unexpected argument '${positionals[0]}'; runs go after --runs`);
    const num = (name: string, example: string) =>
      numberOption(name, values[name as keyof typeof values] as string | undefined, example);
    const result = power({
      ...(drop !== undefined ? { drop } : {}),
      ...(n !== undefined && !fromRuns ? { n } : {}),
      ...(fromRuns ? { caseRates: fromRuns.rates, ...(fromRuns.clusters ? { clusters: fromRuns.clusters } : {}) } : {}),
      ...(values.tolerance !== undefined ? { tolerance: num("tolerance", "0.03")! } : {}),
      ...(values.repeats !== undefined ? { repeats: num("repeats", "3")! } : {}),
      ...(values["pass-rate"] !== undefined ? { passRate: num("pass-rate", "0.8")! } : {}),
      ...(values["flip-rate"] !== undefined ? { flipRate: num("flip-rate", "0.05")! } : {}),
      ...(values.discordance !== undefined ? { discordance: num("discordance", "0.1")! } : {}),
      ...(values["cluster-size"] !== undefined ? { clusterSize: num("cluster-size", "6")! } : {}),
      ...(values.icc !== undefined ? { icc: num("icc", "0.3")! } : {}),
      ...(values.alpha !== undefined ? { alpha: num("alpha", "0.05")! } : {}),
      ...(values.power !== undefined ? { power: num("power", "0.8")! } : {}),
      ...(values.simulations !== undefined ? { simulations: num("simulations", "400")! } : {}),
    });
    const out = measured ? { ...result, measured } : result;
    if (values.json) console.log(JSON.stringify(out, null, 2));
    else console.log([result.summary, ...result.notes.map((note) => `  note: ${note}`)].join("\n"));
    return 0;
  },
};
