import type { RunRecord } from "./types.ts";

/**
 * A run without what only a run's own page needs: the per-case facts a run
 * keeps in its config (`cases`, and the fingerprint's `caseHashes` in its
 * config and summary) grow with the number of cases — 10 MB for a
 * 100k-case run — so lists read heads, never whole runs.
 */
export type RunHead = RunRecord & {
  /** How many cases the run planned (the length of the `cases` the head dropped), when it says. */
  readonly caseCount?: number;
};

const heavy = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

function withoutCaseHashes(value: unknown): unknown {
  if (!heavy(value) || !heavy(value["fingerprint"])) return value;
  const { caseHashes: _dropped, ...fingerprint } = value["fingerprint"];
  return { ...value, fingerprint };
}

/**
 * The light copy of a run that lists show: the record without `config.cases`
 * and without the fingerprint's per-case hashes (in config and summary), and
 * with `caseCount`.
 *
 * @example runHead(run).caseCount // 600, where run.config.cases held 600 entries
 */
export function runHead(run: RunRecord): RunHead {
  const config = run.config as Record<string, unknown>;
  const cases = config["cases"];
  const { cases: _cases, ...rest } = config;
  return {
    ...run,
    config: withoutCaseHashes(rest) as RunRecord["config"],
    ...(run.summary !== undefined ? { summary: withoutCaseHashes(run.summary) as RunRecord["summary"] } : {}),
    ...(Array.isArray(cases) ? { caseCount: cases.length } : {}),
  };
}
