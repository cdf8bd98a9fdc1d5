import type { MetricSummary } from "../../../evals/summary.ts";
import type { RunRecord } from "../../../store/types.ts";
import type { JobView } from "../../app/jobs.svelte.ts";

/**
 * A run's pass rate with its interval, read from the summary stored with the
 * run (so lists never load a run's items).
 *
 * @example runPassRate(run) // { mean: 0.87, lo: 0.84, hi: 0.9, n: 600, … } or undefined before it finished
 */
export function runPassRate(run: RunRecord): MetricSummary | undefined {
  const pass = (run.summary as { pass?: MetricSummary | null } | undefined)?.pass;
  return pass && Number.isFinite(pass.mean) ? pass : undefined;
}

/** The badge tone of a run's status: finished runs pass-toned, failed ones fail-toned, the rest neutral. */
export function runStatusTone(run: RunRecord, job?: JobView): "pass" | "fail" | "warn" | "neutral" | "accent" {
  const state = job?.state ?? run.status;
  if (state === "running") return job ? "accent" : "warn";
  if (state === "finished") return "pass";
  if (state === "failed") return "fail";
  return "neutral";
}
