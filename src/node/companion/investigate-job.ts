import { investigate, type RunEvent } from "../../agent/index.ts";
import { parseLesson } from "../../agent/lessons/lesson-schema.ts";
import type { LessonStore } from "../../agent/lessons/lessons-loop.ts";
import type { Lesson } from "../../agent/lessons/lessons.ts";
import type { FailureCase } from "../../core/index.ts";
import { decodeDataUrl, importDataset } from "../../datasets/index.ts";
import { labelEvaluators } from "../../evals/label-evaluators.ts";
import {
  casesFingerprint,
  checkPlan,
  eventWriter,
  finishInvestigation,
  INVESTIGATION_KIND,
  progressOf,
  rgbaPixels,
} from "../../../workers/investigate-job.ts";
import type { Store } from "../../store/types.ts";
import type { EvalJobContext } from "./eval-job.ts";
import { inlineImages } from "./eval-job.ts";
import { resolveModel } from "./models.ts";
import type { InvestigateJobBody } from "./protocol.ts";
import { relayStore } from "./relay-store.ts";

export interface InvestigateJobOutcome {
  readonly runId: string;
  readonly status: "finished";
  readonly verdicts: readonly { readonly id: string; readonly verdict: string }[];
}

/** How many events go to the store (and the page) in one write at most; the rest wait for the next. */
const EVENTS_PER_WRITE = 200;

/**
 * Runs the page's investigation (the loop M1→M5) on this machine: the same
 * `investigate` the page's model worker runs, on onnxruntime-node, over the
 * cases the page chose (its selection, in its import order, checked against
 * the fingerprint the page computed), writing through a relay that hands
 * every run write to the page: the investigation's run and event log, its
 * label, probe and repair runs with their items, and the report score, so the
 * page's store holds what it would have written itself, and the page's
 * Resume goes on from it. Cancelling keeps everything stored so far.
 *
 * @example await runCompanionInvestigation({ kind: "investigate", plan, model: "tiny-vlm", cases, fingerprint, source, runId }, context)
 */
export async function runCompanionInvestigation(
  body: InvestigateJobBody,
  context: EvalJobContext,
): Promise<InvestigateJobOutcome> {
  const plan = checkPlan(body.plan);
  if (typeof body.runId !== "string" || !/^[\w.:-]{1,200}$/.test(body.runId))
    throw new Error("runId: expected the new investigation's id (letters, digits, '.', ':', '_', '-')");
  if (typeof body.model !== "string" || !body.model) throw new Error("model: expected a bundled model's key");
  if (typeof body.cases !== "string") throw new Error("cases: expected the chosen cases as JSONL text");
  if (typeof body.fingerprint !== "string" || !/^[0-9a-f]{12}$/.test(body.fingerprint))
    throw new Error("fingerprint: expected the 12 hex the page computed over the chosen cases");
  const imported = await importDataset(body.cases, { format: "jsonl", name: `${plan.dataset}.jsonl` });
  if (imported.problems.length) {
    const shown = imported.problems.slice(0, 5).map((p) => `line ${p.line}: ${p.reason}`);
    throw new Error(`cases: ${imported.problems.length} bad row(s) (${shown.join("; ")})`);
  }
  const cases: FailureCase[] = imported.cases;
  if (cases.length === 0) throw new Error("cases: the investigation needs at least one case");
  // The page's fingerprint over the same cases: what arrived is what the page chose, and the report says so.
  const fingerprint = casesFingerprint(cases);
  if (fingerprint !== body.fingerprint)
    throw new Error(
      `cases: they hash to fingerprint ${fingerprint} here, not to the page's ${body.fingerprint}; they changed on the way`,
    );
  const sent = inlineImages(body.images);
  const images = (ref: string): Promise<Uint8Array> => {
    if (ref.startsWith("data:")) {
      const decoded = decodeDataUrl(ref);
      if (decoded instanceof Uint8Array) return Promise.resolve(decoded);
      return Promise.reject(new Error(`image data URL: ${decoded.reason}`));
    }
    const bytes = sent.get(ref);
    return bytes ? Promise.resolve(bytes) : Promise.reject(new Error(`image ${ref} was not sent with the job`));
  };
  for (const c of cases)
    if (c.input.image !== undefined && !c.input.image.startsWith("data:") && !sent.has(c.input.image))
      throw new Error(`case '${c.id}': image ${c.input.image} was not sent with the job`);

  // An investigation reads the model's internals: it runs here, never through a queue.
  const resolved = await resolveModel(body.model, context.modelsRoot);
  const { model } = await context.models.get(resolved, { memo: true });
  const runId = body.runId;
  if (await context.store.getRun(runId)) throw new Error(`run '${runId}' already exists in the companion's store`);
  const store = relayStore(context.store, context.emit);
  await store.createRun({
    id: runId,
    kind: INVESTIGATION_KIND,
    dataset: plan.dataset,
    model: model.spec.key,
    fingerprint,
    status: "running",
    startedAt: new Date().toISOString(),
    config: {
      plan,
      question: plan.question,
      cases: cases.length,
      page: { modelSource: body.modelSource ?? { kind: "bundled", key: body.model } },
      ...(body.codeVersion ? { codeVersion: String(body.codeVersion) } : {}),
      ranOn: "companion",
    },
  });
  try {
    return await loop(store, body, plan, cases, fingerprint, images, model, runId, context);
  } catch (error) {
    // Whatever was stored stays (here and in the page); the page's Resume goes on from it.
    const cancelled = context.signal.aborted;
    await store
      .updateRun(runId, { status: cancelled ? "cancelled" : "failed", finishedAt: new Date().toISOString() })
      .catch(() => undefined);
    if (cancelled)
      throw new Error(
        `investigation '${runId}' was cancelled; its labels, probes and repair runs are kept, and Resume goes on from them`,
        { cause: error },
      );
    throw error;
  }
}

async function loop(
  store: Store,
  body: InvestigateJobBody,
  plan: ReturnType<typeof checkPlan>,
  cases: FailureCase[],
  fingerprint: string,
  images: (ref: string) => Promise<Uint8Array>,
  model: Awaited<ReturnType<EvalJobContext["models"]["get"]>>["model"],
  runId: string,
  context: EvalJobContext,
): Promise<InvestigateJobOutcome> {
  // Events go to the store (and the page) in order, a batch per write, while the loop goes on.
  const { persist, settled } = eventWriter(store, runId, { perWrite: EVENTS_PER_WRITE });
  // The loop holds the investigation's lock; its events are written after they are logged, so the lock is let go
  // only once every one is stored (a write that met the lock half released would be refused).
  // And progress of the label, probe and repair runs, from their stored items.
  const watched = new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (key === "lockRun")
        return async (...args: Parameters<Store["lockRun"]>) => {
          const lock = await target.lockRun(...args);
          if (args[0] !== runId) return lock;
          return {
            ...lock,
            release: async () => {
              await settled().catch(() => undefined);
              await lock.release();
            },
          };
        };
      if (key !== "appendItems" || typeof value !== "function") return value;
      return async (...args: Parameters<Store["appendItems"]>) => {
        await target.appendItems(...args);
        const where = progressOf(runId, args[0]);
        if (where)
          context.onProgress({
            runId,
            stage: `${where.stage} ${where.what}`,
            done: args[2].done,
            total: args[2].total,
          });
      };
    },
  });
  let finished: RunEvent | undefined;
  const result = await investigate({
    store: watched,
    model,
    lessons: sentLessons(body.lessons, runId, context),
    dataset: { id: plan.dataset, cases, source: body.source || plan.dataset, fingerprint },
    evaluators: labelEvaluators(cases),
    images,
    decodeImage: rgbaPixels,
    protocol: { question: plan.question },
    runId,
    holdout: plan.holdout,
    seed: plan.seed,
    alpha: 0.05,
    maxTier: plan.maxTier,
    ...(body.codeVersion ? { codeVersion: String(body.codeVersion) } : {}),
    ...(body.sampled ? { sampled: String(body.sampled) } : {}),
    modelInfo: {
      key: model.spec.key,
      family: model.spec.family,
      source: model.spec.source,
      layers: model.spec.layers,
      heads: model.spec.heads,
      capabilities: [...model.capabilities],
      runtime: "onnxruntime-node (the companion)",
    },
    signal: context.signal,
    sink: (event) => {
      // The end of the run waits until everything before it is stored, as in the page.
      if (event.type === "run.finished") {
        finished = event;
        return;
      }
      persist(event);
      if (event.type === "stage.started") context.onProgress({ runId, stage: String(event.stage), done: 0, total: 0 });
    },
  });
  await settled();
  if (!finished) throw new Error("the loop ended without run.finished");
  // The last writes under the run's lock again: the end of the log, the report, and the status.
  const lock = await store.lockRun(runId);
  try {
    await finishInvestigation(store, runId, finished, result.report, result.events);
  } finally {
    await lock.release();
  }
  return { runId, status: "finished", verdicts: result.loop.verified.map((v) => ({ id: v.id, verdict: v.verdict })) };
}

/** The most lessons a job may carry (the page sends its top ones for the run). */
const MAX_LESSONS = 200;

/**
 * The page's lessons store, as the loop on the companion sees it: it reads
 * the top lessons the page sent with the job (each checked; a bad one is named
 * in `lessons.used`, the rest kept), and what it records goes back to the page
 * in a `lessons` message, for the page to append to its own store.
 */
export function sentLessons(sent: unknown, runId: string, context: Pick<EvalJobContext, "emitLessons">): LessonStore {
  const lessons: Lesson[] = [];
  const problems: string[] = [];
  if (sent !== undefined && !Array.isArray(sent)) problems.push("lessons: expected a list of lessons; none read");
  for (const [i, value] of (Array.isArray(sent) ? sent : []).slice(0, MAX_LESSONS).entries()) {
    try {
      lessons.push(parseLesson(value, `lessons[${i}] (sent by the page)`));
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  const known = new Set(lessons.map((l) => l.id));
  return {
    where: "IndexedDB evalrx-lessons (the page's, its top lessons sent with the job)",
    read: () => ({ lessons, problems }),
    append: (recorded) => {
      const added = recorded.filter((l) => !known.has(l.id));
      for (const l of added) known.add(l.id);
      if (added.length) context.emitLessons?.(runId, added);
      return added.length;
    },
  };
}
