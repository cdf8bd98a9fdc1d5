import type { RunStatus } from "../store/types.ts";
import type { Fingerprint } from "./fingerprint.ts";
import type { CaseView, RunView, TrialView } from "./run-view.ts";
import { PASS_METRIC, type CheckOutcome } from "./types.ts";

/** One case of a synthetic run: `pass` per trial (1/true passed, 0/false failed, null errored). */
export interface SyntheticCase {
  readonly id: string;
  readonly pass: readonly (0 | 1 | boolean | null)[];
  readonly tags?: readonly string[];
  readonly cluster?: string;
  /** Defaults to `h-<id>`: give another to make the case "changed". */
  readonly hash?: string;
  /** Per-evaluator verdicts per trial; `pass` is then their conjunction unless given. */
  readonly checks?: Readonly<Record<string, readonly (0 | 1 | boolean | null)[]>>;
}

export interface SyntheticRun {
  readonly id: string;
  readonly evalKey?: string;
  readonly status?: RunStatus;
  readonly startedAt?: string;
  readonly cases: readonly SyntheticCase[];
  readonly clusterField?: string;
  readonly evaluators?: readonly string[];
  readonly fingerprint?: Partial<Fingerprint>;
}

/**
 * A `RunView` from plain per-case verdict arrays — for worked examples,
 * simulations and the diagnosis loop's tests, without a model or a store.
 *
 * @example syntheticRun({ id: "a", cases: [{ id: "c1", pass: [1, 1, 0] }] }).cases.get("c1")!.trials.length // 3
 */
export function syntheticRun(spec: SyntheticRun): RunView {
  const evaluators = spec.evaluators ?? [...new Set(spec.cases.flatMap((c) => Object.keys(c.checks ?? {})))];
  const cases = new Map<string, CaseView>();
  let repeats = 0;
  for (const c of spec.cases) {
    repeats = Math.max(repeats, c.pass.length);
    const trials: TrialView[] = c.pass.map((p, r) => {
      const checks: Record<string, CheckOutcome> = {};
      for (const name of evaluators) {
        const v = c.checks?.[name]?.[r];
        if (v === undefined) continue;
        checks[name] = { name, version: "1", passed: v === 1 || v === true, errored: v === null };
      }
      const errored = p === null || Object.values(checks).some((x) => x.errored);
      return {
        repeat: r,
        output: "",
        passed: !errored && (p === 1 || p === true),
        errored,
        ...(p === null ? { error: "synthetic error" } : {}),
        checks,
        latencyMs: 0,
      };
    });
    cases.set(c.id, {
      id: c.id,
      hash: c.hash ?? `h-${c.id}`,
      tags: c.tags ?? [],
      ...(c.cluster !== undefined ? { cluster: c.cluster } : {}),
      trials,
    });
  }
  const fingerprint: Fingerprint = {
    datasetVersion: "synthetic",
    caseHashes: Object.fromEntries([...cases.values()].map((c) => [c.id, c.hash])),
    evaluators: Object.fromEntries(evaluators.map((e) => [e, "1"])),
    model: { key: "synthetic" },
    generation: { temperature: 0, repeats },
    ...spec.fingerprint,
  };
  return {
    id: spec.id,
    evalKey: spec.evalKey ?? "synthetic-eval",
    status: spec.status ?? "finished",
    startedAt: spec.startedAt ?? "2026-01-01T00:00:00.000Z",
    repeats,
    metrics: [PASS_METRIC, ...evaluators],
    ...(spec.clusterField !== undefined ? { clusterField: spec.clusterField } : {}),
    fingerprint,
    cases,
  };
}

/**
 * The cases of a paired 2×2 table as two synthetic runs' verdicts: `both`
 * passed in both, `regressed` passed in A only, `fixed` in B only, `neither` in neither.
 *
 * @example pairedTable({ both: 40, regressed: 6, fixed: 1, neither: 3 }) // { a: SyntheticCase[50], b: SyntheticCase[50] }
 */
export function pairedTable(t: { both: number; regressed: number; fixed: number; neither: number }): {
  a: SyntheticCase[];
  b: SyntheticCase[];
} {
  const a: SyntheticCase[] = [];
  const b: SyntheticCase[] = [];
  let i = 0;
  const add = (n: number, pa: 0 | 1, pb: 0 | 1) => {
    for (let k = 0; k < n; k++, i++) {
      const id = `case-${String(i).padStart(3, "0")}`;
      a.push({ id, pass: [pa] });
      b.push({ id, pass: [pb] });
    }
  };
  add(t.both, 1, 1);
  add(t.regressed, 1, 0);
  add(t.fixed, 0, 1);
  add(t.neither, 0, 0);
  return { a, b };
}
