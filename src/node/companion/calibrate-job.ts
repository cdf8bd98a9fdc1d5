import { calibrate, runView, type Calibration } from "../../evals/index.ts";
import type { EvalJobContext } from "./eval-job.ts";
import type { CalibrateJobBody } from "./protocol.ts";

/** The most runs one calibration takes (A/A runs are a handful; this bounds a hostile body). */
const MAX_RUNS = 50;

/**
 * Runs the Compare page's A/A calibration on this machine: the same
 * `calibrate` the page's stats worker and `evalrx calibrate` run, over the
 * runs the page sent with their items (each checked as the store checks a
 * run file: an item that does not fit its run's plan is refused by name).
 * Nothing is written anywhere: the page shows the result as it shows its own.
 *
 * @example const calibration = await runCompanionCalibration({ kind: "calibrate", runs, options: { target: 0.03 } }, context)
 */
export async function runCompanionCalibration(
  body: CalibrateJobBody,
  context: Pick<EvalJobContext, "signal" | "onProgress">,
): Promise<Calibration> {
  if (!Array.isArray(body.runs) || body.runs.length < 2 || body.runs.length > MAX_RUNS)
    throw new Error(
      `runs: expected 2 to ${MAX_RUNS} runs of one eval, each { run, items }; got ${Array.isArray(body.runs) ? body.runs.length : typeof body.runs}`,
    );
  const options = body.options ?? {};
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw new Error("options: expected { target, alpha, simulations } (each optional)");
  for (const key of ["target", "alpha", "simulations"] as const)
    if (options[key] !== undefined && typeof options[key] !== "number")
      throw new Error(`options.${key}: expected a number, got ${JSON.stringify(options[key])}`);
  const views = body.runs.map((entry, i) => {
    if (typeof entry !== "object" || entry === null || !Array.isArray(entry.items) || typeof entry.run !== "object")
      throw new Error(`runs[${i}]: expected { run, items } (a stored run and its judged items)`);
    context.onProgress({
      runId: String(entry.run.id),
      stage: `reading run ${entry.run.id}`,
      done: i,
      total: body.runs.length + 1,
    });
    return runView(entry.run, entry.items);
  });
  context.signal.throwIfAborted();
  const total = body.runs.length + 1;
  context.onProgress({ runId: views[0]!.id, stage: "simulating A/A comparisons", done: total - 1, total });
  // One synchronous call: a Cancel that arrives while it runs takes effect once it returns.
  const result = calibrate(views, {
    ...(options.target !== undefined ? { target: options.target } : {}),
    ...(options.alpha !== undefined ? { alpha: options.alpha } : {}),
    ...(options.simulations !== undefined ? { simulations: options.simulations } : {}),
  });
  context.signal.throwIfAborted();
  context.onProgress({ runId: views[0]!.id, stage: "done", done: total, total });
  return result;
}
