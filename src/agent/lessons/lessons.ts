import type { Report } from "../../report/schema.ts";

/** What an investigation learned that the next one should know. */
export type LessonKind =
  /** A hypothesis the sealed split contradicted. */
  | "refuted"
  /** A hypothesis the sealed split could not decide. */
  | "inconclusive"
  /** A hypothesis the sealed split confirmed. */
  | "supported"
  /** A repair candidate that did not validate at its tier. */
  | "repair-failed"
  /** A failure mode, remembered so that a later run can tell it recurs. */
  | "mode"
  /** A failure mode whose defining signal was a mode in an earlier run too. */
  | "recurring-mode"
  /** A loop that ended with nothing confirmed, or nothing repaired. */
  | "unresolved";

export interface Lesson {
  /** Stable for one kind, subject and run: appending the same lessons twice adds nothing. */
  readonly id: string;
  readonly kind: LessonKind;
  /** The signal it is about (hypotheses, modes), or the repair `tier:candidate`, or `loop`. */
  readonly subject: string;
  /** One sentence for people (the report lists it when a later run uses it). */
  readonly text: string;
  readonly runId: string;
  /** The model's key and family, from the report's provenance. */
  readonly model: { readonly key: string; readonly family?: string };
  /** The dataset's fingerprint and source. */
  readonly dataset: { readonly fingerprint: string; readonly source: string };
  /** When it was learned (ISO 8601). */
  readonly at: string;
}

/** A failure mode as a lesson needs it: its id and its strongest defining signal. */
export interface ModeSummary {
  readonly id: string;
  readonly signal: string;
  readonly size: number;
}

/**
 * Which lessons does this finished investigation leave? One per refuted,
 * inconclusive or supported hypothesis, per repair that did not validate, per
 * failure mode (`recurring-mode` when its defining signal was a mode in
 * `previous`), and one when the loop confirmed nothing or repaired nothing.
 *
 * @example extractLessons(report, { at: "2026-12-01T12:00:00Z" }).map((l) => l.kind) // ["refuted", "repair-failed", …]
 */
export function extractLessons(
  report: Report,
  options: { readonly at: string; readonly modes?: readonly ModeSummary[]; readonly previous?: readonly Lesson[] },
): Lesson[] {
  if (Number.isNaN(Date.parse(options.at)))
    throw new RangeError(`extractLessons(): at must be an ISO 8601 time, got ${JSON.stringify(options.at)}`);
  const info = report.provenance.model ?? {};
  const model = {
    key: typeof info["key"] === "string" ? info["key"] : "unknown",
    ...(typeof info["family"] === "string" ? { family: info["family"] } : {}),
  };
  const dataset = { fingerprint: report.provenance.data.fingerprint, source: report.provenance.data.source };
  const make = (kind: LessonKind, subject: string, text: string): Lesson => ({
    id: `${report.runId}:${kind}:${subject}`,
    kind,
    subject,
    text,
    runId: report.runId,
    model,
    dataset,
    at: options.at,
  });
  const lessons: Lesson[] = [];
  for (const h of report.hypotheses) {
    const kind = h.verdict === "REFUTED" ? "refuted" : h.verdict === "INCONCLUSIVE" ? "inconclusive" : "supported";
    lessons.push(make(kind, h.signal, `${h.statement} — ${h.verdict} on the sealed split: ${h.reason}`));
  }
  for (const r of report.repairs?.candidates ?? [])
    if (!r.validated)
      lessons.push(
        make(
          "repair-failed",
          `${r.tier}:${r.candidate}`,
          `${r.tier} ${r.candidate} did not validate (fixed ${r.fixed}, broke ${r.broken} of ${r.n})`,
        ),
      );
  const earlierModes = new Set(
    (options.previous ?? []).filter((l) => l.kind === "mode" || l.kind === "recurring-mode").map((l) => l.subject),
  );
  for (const mode of options.modes ?? []) {
    const seenBefore = earlierModes.has(mode.signal);
    lessons.push(
      make(
        seenBefore ? "recurring-mode" : "mode",
        mode.signal,
        `a failure mode of ${mode.size} case(s) set apart by ${mode.signal}${seenBefore ? ", as in an earlier run" : ""}`,
      ),
    );
  }
  const confirmed = report.hypotheses.some((h) => h.verdict === "SUPPORTED");
  const repaired = report.repairs ? report.repairs.fixedBy !== null : undefined;
  if (!confirmed || repaired === false)
    lessons.push(
      make(
        "unresolved",
        "loop",
        !confirmed
          ? `the loop confirmed no hypothesis about '${report.question}'`
          : `the loop confirmed a hypothesis but no repair up to ${report.repairs!.maxTier} validated`,
      ),
    );
  return lessons;
}

export interface RankOptions {
  readonly model: { readonly key: string; readonly family?: string };
  readonly dataset: { readonly fingerprint: string; readonly source: string };
  /** The clock, injected so decay can be tested. */
  readonly now: Date;
  /** Default 30 days. */
  readonly halfLifeDays?: number;
  /** Default 10. */
  readonly top?: number;
}

export interface RankedLesson {
  readonly lesson: Lesson;
  /** decay × relevance, in (0, 1]. */
  readonly weight: number;
  /** 0.5^(age / half-life). */
  readonly decay: number;
  /** Mean of model and dataset similarity: 1 same, ½ same family (model) or same source file (dataset), 0 else. */
  readonly relevance: number;
}

/**
 * Which earlier lessons should this investigation read first? Each lesson's
 * weight is its decay (a 30-day half-life by default) times how close its
 * model and dataset are to this one's; unrelated lessons (weight 0) are left
 * out; heaviest first, at most `top`.
 *
 * @example rankLessons(lessons, { model: { key: "tiny-vlm" }, dataset, now: new Date() })[0].weight // 1 for one learned just now on the same model and data
 */
export function rankLessons(lessons: readonly Lesson[], options: RankOptions): RankedLesson[] {
  const halfLife = options.halfLifeDays ?? 30;
  if (!(halfLife > 0)) throw new RangeError(`rankLessons(): halfLifeDays must be positive, got ${halfLife}`);
  const now = options.now.getTime();
  if (Number.isNaN(now)) throw new RangeError("rankLessons(): now is an invalid date");
  const ranked: RankedLesson[] = [];
  for (const lesson of lessons) {
    const ageDays = Math.max(0, (now - Date.parse(lesson.at)) / 86_400_000);
    const decay = 0.5 ** (ageDays / halfLife);
    const modelSim =
      lesson.model.key === options.model.key
        ? 1
        : lesson.model.family !== undefined && lesson.model.family === options.model.family
          ? 0.5
          : 0;
    const dataSim =
      lesson.dataset.fingerprint === options.dataset.fingerprint
        ? 1
        : baseName(lesson.dataset.source) === baseName(options.dataset.source)
          ? 0.5
          : 0;
    const relevance = (modelSim + dataSim) / 2;
    if (relevance === 0 || !Number.isFinite(decay)) continue;
    ranked.push({ lesson, weight: decay * relevance, decay, relevance });
  }
  ranked.sort((a, b) => b.weight - a.weight || (a.lesson.id < b.lesson.id ? -1 : 1));
  return ranked.slice(0, options.top ?? 10);
}

/**
 * How much should earlier lessons raise or lower each signal (or analyzer)
 * in this run's order of work? Supported hypotheses and recurring modes add
 * their weight (a mode seen once, half), refuted ones and failed repairs
 * subtract it, inconclusive ones subtract half:
 * a prior for ordering only — it never changes a test or a verdict.
 *
 * @example lessonPriors(rankLessons(lessons, options)).get("attention.imageShare") // 0.8
 */
export function lessonPriors(ranked: readonly RankedLesson[]): Map<string, number> {
  const sign: Record<LessonKind, number> = {
    supported: 1,
    "recurring-mode": 1,
    mode: 0.5,
    refuted: -1,
    inconclusive: -0.5,
    "repair-failed": -1,
    unresolved: 0,
  };
  const priors = new Map<string, number>();
  for (const { lesson, weight } of ranked) {
    const s = sign[lesson.kind];
    if (s === 0) continue;
    priors.set(lesson.subject, (priors.get(lesson.subject) ?? 0) + s * weight);
  }
  return priors;
}

/**
 * `items` in the order the lessons suggest: higher prior first, the given
 * order kept among equals (a stable sort), so without lessons nothing moves.
 * `keyOf` names the signal or analyzer of an item; a signal's prior also
 * counts for its analyzer (the part before the first dot).
 *
 * @example orderByLessons(["rollout", "attention"], (a) => a, priors) // ["attention", "rollout"] when attention.* was supported before
 */
export function orderByLessons<T>(items: readonly T[], keyOf: (item: T) => string, priors: Map<string, number>): T[] {
  const byAnalyzer = new Map<string, number>();
  for (const [subject, prior] of priors) {
    const analyzer = subject.split(".")[0]!;
    if (analyzer !== subject) byAnalyzer.set(analyzer, (byAnalyzer.get(analyzer) ?? 0) + prior);
  }
  const priorOf = (item: T) => {
    const key = keyOf(item);
    return priors.get(key) ?? byAnalyzer.get(key) ?? 0;
  };
  return items
    .map((item, index) => ({ item, index, prior: priorOf(item) }))
    .sort((a, b) => b.prior - a.prior || a.index - b.index)
    .map((x) => x.item);
}

function baseName(source: string): string {
  return source.split(/[\\/]/).pop() ?? source;
}
