/**
 * One analysis, written by the judge or the user, run in a locked sandbox
 * over the exploration records and kept in the run's log as it ran: the
 * code, the input's fingerprint, the runtime and its limits, and the checked
 * output or the error. Its result is exploratory — a suggestion it makes can
 * become a hypothesis, which M4 decides on the sealed split like any other.
 */
import type { EventLog } from "../events.ts";
import type { CaseTable } from "../signals.ts";
import { analysisRequest, type AnalysisOutput, type SandboxOutcome, type SandboxRunner } from "./protocol.ts";
import { analysisInput } from "./records.ts";

export interface AnalysisRun {
  readonly id: string;
  readonly author: string;
  readonly purpose: string;
  readonly code: string;
  readonly fingerprint: string;
  readonly n: number;
  readonly runtime: string;
  readonly outcome: SandboxOutcome;
  /** Suggestions naming a signal the records do not have, with why they were set aside. */
  readonly setAside: readonly { readonly signal: string; readonly why: string }[];
}

/**
 * Runs `code` in `runner` over `explore` and logs `analysis.ran` (stage M2: exploration only).
 *
 * @example const run = await runAnalysis(childSandbox(), "return { notes: [String(input.records.length)] }", exploreTable, log, { id: "A1", author: "user", purpose: "count" })
 */
export async function runAnalysis(
  runner: SandboxRunner,
  code: string,
  explore: CaseTable,
  log: EventLog,
  meta: { readonly id: string; readonly author: string; readonly purpose: string; readonly signal?: AbortSignal },
): Promise<AnalysisRun> {
  const { input, json, fingerprint } = analysisInput(explore);
  const outcome = await runner.run(analysisRequest(code, json), meta.signal ? { signal: meta.signal } : {});
  const known = new Set(input.signals);
  const setAside =
    outcome.ok === true
      ? outcome.output.suggestions
          .filter((s) => !known.has(s.signal))
          .map((s) => ({
            signal: s.signal,
            why: `'${s.signal}' is not a signal of the exploration records (they have ${input.signals.length}: ${input.signals.slice(0, 8).join(", ")}${input.signals.length > 8 ? ", …" : ""})`,
          }))
      : [];
  const output: AnalysisOutput | undefined = outcome.ok
    ? { ...outcome.output, suggestions: outcome.output.suggestions.filter((s) => known.has(s.signal)) }
    : undefined;
  log.append("M2", "analysis.ran", {
    id: meta.id,
    author: meta.author,
    purpose: meta.purpose,
    code,
    input: { split: "explore", fingerprint, n: input.records.length, signals: input.signals.length },
    runtime: runner.describe,
    ok: outcome.ok,
    ms: outcome.ms,
    ...(output ? { output } : {}),
    ...(!outcome.ok ? { reason: outcome.reason, error: outcome.error } : {}),
    ...(setAside.length ? { setAside } : {}),
  });
  return {
    id: meta.id,
    author: meta.author,
    purpose: meta.purpose,
    code,
    fingerprint,
    n: input.records.length,
    runtime: runner.describe,
    outcome: output && outcome.ok ? { ...outcome, output } : outcome,
    setAside,
  };
}
