/**
 * Lessons inside the loop: at the start an investigation reads the top
 * lessons of earlier runs on a similar model or dataset (`lessons.used`) and
 * turns them into ordering priors for its analyzers and hypotheses — an order
 * of work, never a test; at the end it extracts its own lessons from the
 * report so far and appends them to the store (`lessons.recorded`).
 */
import type { Report } from "../../report/schema.ts";
import type { EventLog } from "../events.ts";
import type { LessonsRead } from "./lesson-schema.ts";
import {
  extractLessons,
  lessonPriors,
  orderByLessons,
  rankLessons,
  type Lesson,
  type ModeSummary,
  type RankedLesson,
} from "./lessons.ts";

/** Where lessons live: the CLI's JSONL file (`LessonFile`) or the page's IndexedDB (`LessonDb`), behind one shape. */
export interface LessonStore {
  /** Where it is, in words (a path, or `IndexedDB evalrx-lessons`), for the report. */
  readonly where: string;
  read(): LessonsRead | Promise<LessonsRead>;
  append(lessons: readonly Lesson[]): number | Promise<number>;
}

/** Which run this is, as lessons are matched: its model and its dataset. */
export interface LessonContext {
  readonly model: { readonly key: string; readonly family?: string };
  readonly dataset: { readonly fingerprint: string; readonly source: string };
}

/** Each analyzer's signal prefix (`sink.mass.pooled` → the `attentionSink` analyzer). */
const ANALYZER_OF_PREFIX: Readonly<Record<string, string>> = {
  attention: "attention",
  sink: "attentionSink",
  attentionEntropy: "attentionEntropy",
  rollout: "attentionRollout",
  logitLens: "logitLens",
  tokenEntropy: "tokenEntropy",
  logprob: "logprobEntropy",
  promptContrast: "promptContrast",
};

/** What the lessons read at the start give the loop. */
export interface LessonsForRun {
  readonly ranked: readonly RankedLesson[];
  /** Prior per signal (lesson subject). */
  readonly priors: ReadonlyMap<string, number>;
  /** Prior per analyzer name (the sum over its signals). */
  readonly analyzerPriors: ReadonlyMap<string, number>;
  /** Every lesson in the store (for `recurring-mode` at the end). */
  readonly all: readonly Lesson[];
}

export const LESSONS_USE =
  "ordering only: analyzers run and hypotheses are numbered by these priors (higher first); which signals are tested, the screen, the tests and the verdicts do not depend on them";

/**
 * Reads the store, ranks its lessons for this run (30-day half-life times
 * model/dataset similarity, at `now`), and logs `lessons.used`.
 *
 * @example
 * const lessons = await readLessons(new LessonFile(".evalrx/lessons.jsonl"), { model, dataset }, log, new Date());
 * lessons.ranked[0]?.lesson.text // "attention.imageShare.pooled: lower in failures … — SUPPORTED …"
 */
export async function readLessons(
  store: LessonStore,
  context: LessonContext,
  log: EventLog,
  now: Date,
  options: { readonly top?: number; readonly halfLifeDays?: number } = {},
): Promise<LessonsForRun> {
  const read = await store.read();
  const ranked = rankLessons(read.lessons, {
    ...context,
    now,
    top: options.top ?? 10,
    ...(options.halfLifeDays ? { halfLifeDays: options.halfLifeDays } : {}),
  });
  const priors = lessonPriors(ranked);
  const analyzerPriors = new Map<string, number>();
  for (const [subject, prior] of priors) {
    const analyzer = ANALYZER_OF_PREFIX[subject.split(".")[0]!];
    if (analyzer) analyzerPriors.set(analyzer, (analyzerPriors.get(analyzer) ?? 0) + prior);
  }
  log.append("setup", "lessons.used", {
    store: store.where,
    use: LESSONS_USE,
    used: ranked.map((r) => ({
      id: r.lesson.id,
      kind: r.lesson.kind,
      subject: r.lesson.subject,
      text: r.lesson.text,
      runId: r.lesson.runId,
      at: r.lesson.at,
      weight: r.weight,
      decay: r.decay,
      relevance: r.relevance,
    })),
    priors: [...priors].map(([subject, prior]) => ({ subject, prior })),
    problems: read.problems.slice(0, 20),
  });
  return { ranked, priors, analyzerPriors, all: read.lessons };
}

/**
 * The ordering the lessons suggest for M1's analyzers (by name) — a stable
 * sort, so without lessons nothing moves.
 *
 * @example reorderAnalyzers(lessons)(ranked).map((a) => a.analyzer.name) // ["attentionSink", "attention", …]
 */
export function reorderAnalyzers(lessons: LessonsForRun) {
  return <T extends { readonly analyzer: { readonly name: string } }>(ranked: readonly T[]): T[] =>
    orderByLessons(ranked, (a) => a.analyzer.name, new Map(lessons.analyzerPriors));
}

/** The ordering the lessons suggest for M3's hypotheses (by signal). */
export function reorderSignals(lessons: LessonsForRun) {
  return <T extends { readonly signal: string }>(items: readonly T[]): T[] =>
    orderByLessons(items, (f) => f.signal, new Map(lessons.priors));
}

/**
 * Extracts this run's lessons from its report so far (modes as their
 * strongest defining signal), appends them to the store, and logs
 * `lessons.recorded`. Returns how many were new.
 *
 * @example await recordLessons(store, buildReport(log.events), log, { at: new Date().toISOString(), modes, previous })
 */
export async function recordLessons(
  store: LessonStore,
  report: Report,
  log: EventLog,
  options: { readonly at: string; readonly modes?: readonly ModeSummary[]; readonly previous?: readonly Lesson[] },
): Promise<number> {
  const lessons = extractLessons(report, options);
  const added = await store.append(lessons);
  log.append("report", "lessons.recorded", {
    store: store.where,
    added,
    lessons: lessons.map((l) => ({ id: l.id, kind: l.kind, subject: l.subject, text: l.text })),
  });
  return added;
}
