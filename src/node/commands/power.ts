import { discordance, power } from "../../evals/index.ts";
import type { Command } from "../cli.ts";
import { numberOption, openStore, parseCommandArgs, readRun } from "../eval-runs.ts";

const usage = `evalrx power (--discordance 0.1 | --runs <a> <b>) (--drop 0.05 | --n 400) [--alpha 0.05] [--power 0.8] [--store DIR] [--json]

  How many paired cases a McNemar comparison needs to detect a drop (or the drop n cases can detect), given the
  share of cases two runs disagree on — stated, or measured from two runs with --runs.`;

export const command: Command = {
  summary: "cases needed to detect a drop (or the drop n cases detect), from the runs' discordance",
  usage,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        discordance: { type: "string" },
        runs: { type: "boolean" },
        drop: { type: "string" },
        n: { type: "string" },
        alpha: { type: "string" },
        power: { type: "string" },
        store: { type: "string" },
        json: { type: "boolean" },
      },
      usage,
    );
    let pd = numberOption("discordance", values.discordance, "0.1");
    let measured: { discordance: number; n: number } | undefined;
    if (values.runs) {
      if (positionals.length !== 2) throw new Error(`--runs takes two runs, got ${positionals.length}`);
      const store = await openStore(values.store);
      measured = discordance(await readRun(store, positionals[0]!), await readRun(store, positionals[1]!));
      pd = measured.discordance;
      if (pd === 0)
        throw new Error(
          `runs '${positionals[0]}' and '${positionals[1]}' agree on all ${measured.n} shared cases (discordance 0); state an expected --discordance instead`,
        );
    } else if (positionals.length) throw new Error(`unexpected argument '${positionals[0]}'; runs go after --runs`);
    if (pd === undefined) throw new Error("give --discordance 0.1 or --runs <a> <b>");
    const drop = numberOption("drop", values.drop, "0.05");
    const n = numberOption("n", values.n, "400");
    if (drop === undefined && n === undefined)
      throw new Error("give --drop 0.05 (cases needed) or --n 400 (detectable drop)");
    const result = power({
      discordance: pd,
      ...(drop !== undefined ? { drop } : { n: n! }),
      ...(values.alpha !== undefined ? { alpha: numberOption("alpha", values.alpha, "0.05")! } : {}),
      ...(values.power !== undefined ? { power: numberOption("power", values.power, "0.8")! } : {}),
    });
    const out = measured ? { ...result, measured } : result;
    console.log(values.json ? JSON.stringify(out, null, 2) : result.summary);
    return 0;
  },
};
