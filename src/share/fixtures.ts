/**
 * Made-up runs and reports for the share tests, the share e2e tests and the
 * delivery bench: real shapes (an eval run's plan, items that agree with it,
 * the summary `summarize` gives; a report that `validateReport` accepts), with
 * every text field optionally replaced by hostile strings, so that "nothing
 * from a link runs" is tested on the same payloads a link carries.
 */
import { fingerprintHash, type Fingerprint } from "../evals/fingerprint.ts";
import { runView, type EvalRunConfig } from "../evals/run-view.ts";
import { summarize } from "../evals/summary.ts";
import type { Report } from "../report/schema.ts";
import type { ItemRecord, RunExport, RunRecord } from "../store/types.ts";

/**
 * Strings that would run code, fetch something, break out of markup or
 * reorder text if a page rendered them as HTML, as a URL or unescaped:
 * the XSS corpus every untrusted-input test feeds through ids, prompts,
 * answers, tags, column names and model names.
 */
export const HOSTILE_STRINGS: readonly string[] = [
  "<script>window.__pwned=1</script>",
  '"><img src=x onerror="window.__pwned=2">',
  "javascript:window.__pwned=3",
  "</style><script>window.__pwned=4</script>",
  "\u202Egnp.exe\u202C \u2066bidi\u2069",
  "<svg onload=window.__pwned=5>",
  "{{constructor.constructor('window.__pwned=6')()}}",
];

/** The i-th hostile string, cycling, with a suffix that keeps ids distinct. */
const hostile = (i: number, suffix = ""): string => `${HOSTILE_STRINGS[i % HOSTILE_STRINGS.length]}${suffix}`;

export interface DemoRunOptions {
  /** How many cases (default 20). */
  readonly cases?: number;
  /** Repeats per case (default 1). */
  readonly repeats?: number;
  /** Put the hostile strings in every text field (ids, prompts' answers, tags, model, eval, dataset). */
  readonly hostile?: boolean;
  /** The run's id (default "demo-run"). */
  readonly id?: string;
}

/**
 * A finished eval run as a run file: `cases` planned cases, each judged by a
 * `yesNo` evaluator, roughly 70% passing (deterministic), with the summary
 * `summarize` computes for it.
 *
 * @example demoRunExport({ cases: 600 }).items.length // 600
 */
export function demoRunExport(options: DemoRunOptions = {}): RunExport {
  const n = options.cases ?? 20;
  const repeats = options.repeats ?? 1;
  if (!(Number.isSafeInteger(n) && n >= 1)) throw new RangeError(`demoRunExport(): cases must be ≥ 1, got ${n}`);
  const bad = options.hostile === true;
  const id = options.id ?? (bad ? hostile(1, " run") : "demo-run");
  const model = bad ? hostile(0, " model") : "bundled:tiny-vlm";
  const cases = Array.from({ length: n }, (_, i) => ({
    id: bad ? hostile(i, ` #${i}`) : `pope-${String(i).padStart(4, "0")}`,
    hash: `h${(i * 2654435761) % 4294967296}`,
    tags: bad ? [hostile(i + 3), "split:adversarial"] : [i % 3 === 0 ? "split:adversarial" : "split:random"],
  }));
  const fingerprint: Fingerprint = {
    datasetVersion: "demo-1",
    caseHashes: Object.fromEntries(cases.map((c) => [c.id, c.hash])),
    evaluators: { yesNo: "1" },
    model: { key: model },
    generation: { temperature: 0, repeats },
  };
  const config: EvalRunConfig = {
    eval: bad ? hostile(2, " eval") : "pope-yesno",
    repeats,
    evaluators: [{ name: "yesNo", version: "1", kind: "code" }],
    fingerprint,
    cases,
  };
  const run: RunRecord = {
    id,
    kind: "eval",
    dataset: bad ? hostile(3, " dataset") : "pope",
    model,
    fingerprint: fingerprintHash(fingerprint),
    status: "finished",
    startedAt: "2026-12-01T10:00:00.000Z",
    finishedAt: "2026-12-01T10:01:00.000Z",
    config,
  };
  const items: ItemRecord[] = [];
  cases.forEach((c, i) => {
    for (let r = 0; r < repeats; r++) {
      const passed = (i * 7 + r * 3) % 10 < 7;
      items.push({
        runId: id,
        caseId: c.id,
        repeat: r,
        index: i * repeats + r,
        output: bad ? hostile(i + r + 5, passed ? " yes" : " no") : passed ? "yes" : "no",
        passed,
        checks: [{ name: "yesNo", passed, score: passed ? 1 : 0 }],
        latencyMs: 20 + ((i * 13) % 17),
      });
    }
  });
  const summary = summarize(runView(run, items));
  return {
    format: "evalrx-run",
    version: 1,
    exportedAt: "2026-12-01T10:02:00.000Z",
    run: { ...run, summary: JSON.parse(JSON.stringify(summary)) as Record<string, unknown> },
    items,
    events: [],
    scores: [],
    traces: [],
  };
}

/**
 * An investigation report that `validateReport` accepts: `signals` tested
 * signals (each with a histogram), two hypotheses (one supported, one
 * refuted), problems and provenance for `cases` cases; with `hostile`, the
 * hostile strings in its ids, statements, signal names and question.
 *
 * @example demoReport({ cases: 600 }).provenance.data.n // 600
 */
export function demoReport(options: { cases?: number; signals?: number; hostile?: boolean } = {}): Report {
  const n = options.cases ?? 600;
  const k = options.signals ?? 12;
  const bad = options.hostile === true;
  const t = (i: number, plain: string) => (bad ? hostile(i, ` ${plain}`) : plain);
  const effect = (name: string, value: number) => ({
    name,
    value,
    nullValue: 0,
    lo: value - 0.1,
    hi: value + 0.1,
    method: "Newcombe",
  });
  const tested = Array.from({ length: k }, (_, i) => ({
    signal: t(i, `signal-${i}`),
    kind: "numeric" as const,
    test: "Mann–Whitney U",
    n,
    failures: Math.round(n * 0.3),
    p: 1 / (i + 2) ** 3,
    e: (i + 2) ** 2,
    effect: effect("AUC − 0.5", 0.3 / (i + 1)),
    selected: i < 2,
    figure: {
      type: "histogram" as const,
      edges: Array.from({ length: 21 }, (_, j) => j / 20),
      fail: Array.from({ length: 20 }, (_, j) => (j * 7 + i) % 13),
      pass: Array.from({ length: 20 }, (_, j) => (j * 5 + i) % 11),
    },
  }));
  const hypothesis = (i: number, verdict: "SUPPORTED" | "REFUTED") => ({
    id: t(i, `H${i + 1}`),
    signal: tested[i]!.signal,
    mechanism: t(i + 1, "the model answers yes when the object is often seen with the scene"),
    author: "agent",
    statement: t(i + 2, `failures have higher ${tested[i]!.signal}`),
    direction: "higher",
    directionSign: 1 as const,
    refutation: "no difference on the sealed split",
    test: "Mann–Whitney U",
    exploreN: Math.round(n / 2),
    exploreEffect: effect("AUC − 0.5", 0.2),
    exploreE: 12,
    sealedN: Math.round(n / 2),
    sealedEffect: effect("AUC − 0.5", verdict === "SUPPORTED" ? 0.18 : 0.01),
    eValue: verdict === "SUPPORTED" ? 48 : 0.7,
    p: verdict === "SUPPORTED" ? 0.0004 : 0.61,
    eMethod: "likelihood ratio",
    verdict,
    reason: verdict === "SUPPORTED" ? "e-BH rejects at α = 0.05" : "the sealed effect is null",
    gates: {
      statistical: { passed: verdict === "SUPPORTED", eBH: verdict === "SUPPORTED", direction: true },
      protocol: { consistent: true, by: "protocol", reason: "stated before the seal opened" },
    },
    evidence: { stated: 1, frozen: 2, sealedOpened: 3, decided: 4 },
  });
  return {
    format: "evalrx-report",
    version: 1,
    runId: t(1, "investigation-demo"),
    kind: "investigate",
    question: t(3, "why does the model say yes to absent objects?"),
    createdAt: "2026-12-01T10:00:00.000Z",
    finishedAt: "2026-12-01T10:05:00.000Z",
    complete: true,
    provenance: {
      codeVersion: "test",
      seed: 1,
      alpha: 0.05,
      data: {
        source: t(4, "demo POPE"),
        fingerprint: "fp",
        n,
        labelColumn: t(5, "label"),
        labelDistribution: { fail: Math.round(n * 0.3), pass: n - Math.round(n * 0.3) },
      },
      model: { key: t(0, "tiny-vlm") },
      holdout: { fraction: 0.5, by: "case", exploreN: n / 2, sealedN: n / 2 },
    },
    signals: {
      tried: k,
      selected: tested.slice(0, 2).map((s) => s.signal),
      untestable: [{ name: t(6, "constant"), reason: "it never varies" }],
      tested,
      procedure: "explore on half, seal the other half",
    },
    hypotheses: [hypothesis(0, "SUPPORTED"), hypothesis(1, "REFUTED")],
    problems: [{ what: t(2, "tiny sample"), why: "few failures in one split" }],
    stages: [{ stage: "M1", ms: 1200 }],
    eValueMethods: ["likelihood ratio"],
  };
}
