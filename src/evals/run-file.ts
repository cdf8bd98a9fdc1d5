import { checkExport } from "../store/codec.ts";
import type { RunExport } from "../store/types.ts";
import { evalConfig, runView, type RunView } from "./run-view.ts";

/**
 * Is this parsed JSON a run file this version can read, and is its run
 * consistent? Checks the envelope and every record's shape (`checkExport`),
 * then, for an eval run, every item against the run's plan (`runView`: a
 * planned case and repeat, judged once, a boolean verdict that agrees with
 * its checks). Throws naming the file and the first item that is not; a
 * tampered or corrupted file never reaches a gate. The CLI checks a run file
 * with this before it gates or compares one; the page should before it
 * imports one (the store's `readRunFile` checks the envelope only).
 *
 * @example const { data, view } = checkRunFile(JSON.parse(text), "main.run.json")
 */
export function checkRunFile(json: unknown, name = "the run file"): { data: RunExport; view?: RunView } {
  let data: RunExport;
  try {
    data = checkExport(json);
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}`, { cause: error });
  }
  let isEval = true;
  try {
    evalConfig(data.run);
  } catch (error) {
    // A run that is not an eval (an investigation, a probe) has no plan to check items against.
    if ((error as Error).message.includes("is not an eval run")) isEval = false;
    else throw new Error(`${name}: ${(error as Error).message}`, { cause: error });
  }
  if (!isEval) return { data };
  try {
    return { data, view: runView(data.run, data.items) };
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}`, { cause: error });
  }
}
