/**
 * `investigate`: the whole loop on a model — M1 probe, M2–M4 on the signals
 * it produced, M5 mechanism test and repair ladder — writing every step to
 * the run's event log; the report is folded from that log. Resumable: labels,
 * probes and repair runs live in the store, so a killed run continues without
 * judging a stored case again.
 */
import type { FailureCase, ImagePixels, Model } from "../core/index.ts";
import type { Evaluator } from "../evals/index.ts";
import type { Report } from "../report/schema.ts";
import type { Store } from "../store/index.ts";
import { EventLog, type RunEvent } from "./events.ts";
import { evidenceCases } from "./evidence.ts";
import type { Judge } from "./judge.ts";
import { runLoop, timed, type LoopResult } from "./loop.ts";
import type { FailureModeOptions } from "./modes/failure-modes.ts";
import { MODE_COLUMN, modeDistances } from "./modes/mode-loop.ts";
import { growDataset, type ProbeSearchPlan } from "./probes/grow-dataset.ts";
import { WRITABLE_ATTENTION } from "./agentic/tools.ts";
import {
  readLessons,
  recordLessons,
  reorderAnalyzers,
  reorderSignals,
  type LessonStore,
  type LessonsForRun,
} from "./lessons/lessons-loop.ts";
import { ClosesBehind } from "./closes-behind.ts";
import { testMechanism } from "./mechanism-test.ts";
import { probe, type ProbedCase } from "./probe.ts";
import { tagsOf, type ExperimentProtocol } from "./protocol.ts";
import type { ScreenRule } from "./explore.ts";
import type { L4Pool } from "./l4/executor.ts";
import {
  m5Budget,
  climb,
  plannedCandidates,
  tierRange,
  type Candidate,
  type DecodeImage,
  type Tier,
} from "./repair.ts";
import { buildReport } from "./report.ts";
import type { CaseTable } from "./signals.ts";

export interface InvestigateOptions {
  readonly store: Store;
  readonly model: Model;
  readonly dataset: {
    readonly id: string;
    readonly cases: readonly FailureCase[];
    readonly source: string;
    readonly fingerprint: string;
  };
  readonly evaluators: readonly Evaluator[];
  readonly images: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
  readonly decodeImage?: DecodeImage;
  readonly protocol: ExperimentProtocol;
  readonly runId: string;
  readonly holdout?: number;
  readonly seed?: number;
  readonly alpha?: number;
  /** Highest repair tier tried (default L3b); "none" skips M5. */
  readonly maxTier?: Tier | "none";
  /** The repair ladder's first rung (default L1): the rungs below it are neither run nor counted in M5's α. */
  readonly minTier?: Tier;
  /** M2's screen (default p ≤ 0.05 on the exploration split, at most 5 signals). */
  readonly screen?: Partial<ScreenRule>;
  /** Share of the sealed split kept for M5 alone (default 0: M5 reuses M4's sealed cases, and says so). */
  readonly repairHoldout?: number;
  readonly judge?: Judge;
  readonly codeVersion?: string;
  /** How the cases were chosen, when sampled (stated in the report). */
  readonly sampled?: string;
  readonly modelInfo?: Readonly<Record<string, unknown>>;
  /** Events of the interrupted run being resumed (its events.jsonl). */
  readonly previous?: readonly RunEvent[];
  readonly sink?: (event: RunEvent) => void;
  readonly now?: () => number;
  readonly signal?: AbortSignal;
  readonly onProbeCase?: (done: number, total: number) => void;
  readonly onLabelCase?: (done: number, total: number) => void;
  readonly maxNewTokens?: number;
  /**
   * Model calls M1 and M5 keep in flight (default 1, as the CLI runs): more only pays when `model` runs calls side
   * by side (the page's pool of model workers). Results are stored in case order either way.
   */
  readonly concurrency?: number;
  /** Failure modes on the exploration split, fed to M3 (default on); false skips them. */
  readonly modes?: boolean | FailureModeOptions;
  /**
   * Where lessons of earlier runs are read at the start (they order analyzers and hypotheses, never a test)
   * and this run's are appended at the end; without it no lesson is read or written.
   */
  readonly lessons?: LessonStore;
  /**
   * Probe search before M1 (`--search-probes`): failing variants of the seed cases' scene questions are
   * synthesized within `budget` model calls and stored with the cases as a new dataset version, which M1 probes;
   * with `judgeParaphrases` the `judge` endpoint also rewords the seeds' questions, each wording checked.
   */
  readonly searchProbes?: ProbeSearchPlan;
  /**
   * An L4 executor (`--max-tier L4` on a model small enough to train here): given the diagnosis-only pool (the
   * exploration split) and the ids it must never train on, the candidate M5 tries at L4; none keeps the recipe only.
   */
  readonly l4?: (pool: L4Pool) => Candidate | undefined;
}

function scalar(v: unknown): boolean {
  return v === null || v === undefined || ["string", "number", "boolean"].includes(typeof v);
}

/**
 * The table M2–M4 work on: one row per probed case, every analyzer signal,
 * and the case's own scalar fields (meta, split, expected) as candidate signals.
 */
export function probedTable(
  probed: readonly ProbedCase[],
  analyzerTags: ReadonlyMap<string, readonly string[]>,
): CaseTable {
  const columns = new Map<string, unknown[]>();
  const tags = new Map<string, readonly string[]>();
  const signalNames = [...new Set(probed.flatMap((p) => Object.keys(p.signals)))].sort();
  for (const name of signalNames) {
    columns.set(
      name,
      probed.map((p) => (name in p.signals ? p.signals[name] : null)),
    );
    const prefix = name.split(".")[0]!;
    tags.set(name, analyzerTags.get(prefix) ?? tagsOf(name));
  }
  const metaNames = [...new Set(probed.flatMap((p) => Object.keys(p.case.meta)))].sort();
  for (const name of metaNames) {
    if (!probed.every((p) => scalar(p.case.meta[name]))) continue;
    columns.set(
      `meta.${name}`,
      probed.map((p) => p.case.meta[name] ?? null),
    );
    tags.set(`meta.${name}`, tagsOf(name.replace(/_/g, " ")));
  }
  if (probed.some((p) => p.case.split !== undefined)) {
    columns.set(
      "split",
      probed.map((p) => p.case.split ?? null),
    );
    tags.set("split", ["prior"]);
  }
  if (probed.every((p) => scalar(p.case.expected))) {
    columns.set(
      "expected",
      probed.map((p) => (p.case.expected as string | number | boolean | undefined) ?? null),
    );
    tags.set("expected", ["content"]);
  }
  const hasClusters = probed.some((p) => p.case.cluster !== undefined);
  return {
    ids: probed.map((p) => p.case.id),
    failed: probed.map((p) => !p.passed),
    ...(hasClusters ? { clusters: probed.map((p) => p.case.cluster ?? `id:${p.case.id}`) } : {}),
    columns,
    tags,
  };
}

/** Tags of each analyzer's signal prefix, so M3 and the protocol gate know what a signal measures. */
export const SIGNAL_TAGS = new Map<string, readonly string[]>([
  ["attention", ["attention", "image"]],
  ["sink", ["attention", "sink"]],
  ["attentionEntropy", ["attention"]],
  ["rollout", ["attention", "image"]],
  ["logitLens", ["layer", "uncertainty"]],
  ["tokenEntropy", ["uncertainty"]],
  ["logprob", ["uncertainty"]],
  ["promptContrast", ["prompt"]],
]);

/**
 * Runs M1 → M5 and returns the report with its events.
 * Example: `await investigate({ store, model, dataset, evaluators: [yesNo()], images, protocol: { question: "What predicts the hallucinations?" }, runId: "inv-1" })`.
 */
export async function investigate(
  o: InvestigateOptions,
): Promise<{ report: Report; events: readonly RunEvent[]; loop: LoopResult }> {
  if (o.searchProbes?.judgeParaphrases && !o.judge)
    throw new Error(
      "judge paraphrases need a judge endpoint (--judge URL, or the page's OpenAI-compatible judge): the rule paraphrases need none",
    );
  // One writer per investigation for its whole life: a second one on the same run is refused before anything runs.
  const lock = await o.store.lockRun(o.runId);
  try {
    return await investigateLocked(o);
  } finally {
    await lock.release();
  }
}

async function investigateLocked(
  o: InvestigateOptions,
): Promise<{ report: Report; events: readonly RunEvent[]; loop: LoopResult }> {
  const seed = o.seed ?? 1;
  const alpha = o.alpha ?? 0.05;
  const { minTier, maxTier } = tierRange(o.minTier, o.maxTier ?? "L3b");
  // A resumed run keeps what it was started with; every later stage is recomputed from the stored labels and probes.
  const kept = (o.previous ?? []).filter((e) => e.type === "run.started" || e.type === "data.loaded");
  const resumed = kept.find((e) => e.type === "run.started");
  const startedAt = resumed?.payload.minTier ?? "L1";
  if (resumed && startedAt !== minTier)
    throw new Error(
      `min tier is ${minTier} where the interrupted run started its ladder at ${String(startedAt)}: resume it with the same min tier`,
    );
  const log = new EventLog({ runId: o.runId, now: o.now, sink: o.sink, previous: kept });
  if (kept.length) {
    for (const e of kept) o.sink?.(e);
    log.append("setup", "run.resumed", {
      discarded: (o.previous?.length ?? 0) - kept.length,
      note: "stages after setup are recomputed: stored labels, probes and repair runs are read back, never judged again",
    });
  } else {
    log.append("setup", "run.started", {
      kind: "investigate",
      question: o.protocol.question,
      seed,
      alpha,
      holdout: o.holdout ?? 0.4,
      maxTier,
      ...(minTier !== "L1" ? { minTier } : {}),
      codeVersion: o.codeVersion ?? "unknown",
      judge: o.judge ? (o.judge.id ?? "configured") : "rules",
      ...(o.modelInfo ? { model: o.modelInfo } : {}),
    });
    log.append("setup", "data.loaded", {
      source: o.dataset.source,
      fingerprint: o.dataset.fingerprint,
      n: o.dataset.cases.length,
      labelColumn: null,
      labelDistribution: { fail: 0, pass: 0 },
      labelMeaning: `labelled in M1 by ${o.evaluators.map((e) => e.name).join(", ")}`,
      ...(o.sampled ? { sampled: o.sampled } : {}),
    });
  }

  const now = o.now ?? (() => Date.now());
  const lessons: LessonsForRun | undefined = o.lessons
    ? await readLessons(
        o.lessons,
        {
          model: {
            key: typeof o.modelInfo?.["key"] === "string" ? o.modelInfo["key"] : "unknown",
            ...(typeof o.modelInfo?.["family"] === "string" ? { family: o.modelInfo["family"] } : {}),
          },
          dataset: { fingerprint: o.dataset.fingerprint, source: o.dataset.source },
        },
        log,
        new Date(now()),
      )
    : undefined;
  const grown = o.searchProbes
    ? await growDataset(
        {
          store: o.store,
          model: o.model,
          dataset: o.dataset,
          images: o.images,
          budget: o.searchProbes.budget,
          seed,
          ...(o.signal ? { signal: o.signal } : {}),
          ...(o.now ? { now: o.now } : {}),
          ...(o.searchProbes.judgeParaphrases && o.judge ? { paraphraser: o.judge } : {}),
        },
        log,
      )
    : undefined;
  const dataset = grown ? { ...o.dataset, id: grown.id, cases: grown.cases } : o.dataset;
  // Synthesized cases name their image by its store key; every other image is read as the caller reads it.
  const images: InvestigateOptions["images"] = grown
    ? async (ref, row) => {
        if (!ref.startsWith("sha256:") || row.meta.provenance === undefined) return o.images(ref, row);
        const image = await o.store.getImage(ref);
        if (!image) throw new Error(`case ${row.id}: its synthesized image ${ref} is not in the store`);
        return image.bytes;
      }
    : o.images;
  const probed = await timed(log, "M1", () =>
    probe(
      {
        store: o.store,
        model: o.model,
        dataset,
        evaluators: o.evaluators,
        images,
        protocol: o.protocol,
        runId: o.runId,
        ...(o.maxNewTokens ? { maxNewTokens: o.maxNewTokens } : {}),
        ...(o.concurrency ? { concurrency: o.concurrency } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.onProbeCase ? { onCase: o.onProbeCase } : {}),
        ...(o.onLabelCase ? { onLabel: o.onLabelCase } : {}),
        ...(o.judge ? { judge: o.judge } : {}),
        ...(lessons ? { reorder: reorderAnalyzers(lessons) } : {}),
      },
      log,
    ),
  );
  const table = probedTable(probed, SIGNAL_TAGS);
  const loop = await runLoop(table, log, {
    protocol: o.protocol,
    holdout: o.holdout,
    seed,
    alpha,
    judge: o.judge,
    resamples: { explore: 200, sealed: 1000 },
    ...(o.screen ? { screen: o.screen } : {}),
    ...(o.repairHoldout ? { repairHoldout: o.repairHoldout } : {}),
    modes: o.modes ?? true,
    ...(lessons ? { reorder: reorderSignals(lessons) } : {}),
  });

  if (maxTier !== "none") {
    // Each candidate run's end is recorded behind the next candidate's judging; M5 ends once every one is.
    const closes = new ClosesBehind();
    await timed(log, "M5", () =>
      closes.around(async () => {
        const sealed = (loop.repair ?? loop.sealed).open("M5");
        const casesNote = loop.repair
          ? `validated on the ${loop.repair.n} cases of the repair split, which M2–M4 never read`
          : `reused: the ${sealed.ids.length} sealed cases M4 decided the hypotheses on (no separate repair split; --repair-holdout keeps one)`;
        const byId = new Map(probed.map((p) => [p.case.id, p]));
        const cases = sealed.ids.map((id) => byId.get(id)!.case);
        const baseline = new Map(sealed.ids.map((id) => [id, byId.get(id)!.passed]));
        const failures = [...baseline.values()].filter((p) => !p).length;
        if (failures === 0) {
          log.append("M5", "problem", { what: "M5", why: "no sealed case fails: there is nothing to repair" });
          return;
        }
        const supported = loop.verified
          .filter((v) => v.verdict === "SUPPORTED")
          .map((v) => ({ v, h: loop.hypotheses.find((h) => h.id === v.id)! }))
          .sort((a, b) => a.v.association.p - b.v.association.p || b.v.weight - a.v.weight);
        const best = supported[0]?.h ?? null;
        const ctx = {
          store: o.store,
          model: o.model,
          dataset,
          evaluators: o.evaluators,
          images,
          runId: o.runId,
          ...(o.maxNewTokens ? { maxNewTokens: o.maxNewTokens } : {}),
          ...(o.concurrency ? { concurrency: o.concurrency } : {}),
          ...(o.signal ? { signal: o.signal } : {}),
          closes,
        };
        // Mechanism test: write the internal the best attention hypothesis names, in the direction that should reduce failures.
        const done = new Set<string>();
        const attentionH = supported.map((s) => s.h).find((h) => WRITABLE_ATTENTION.test(h.signal));
        const mechanism = attentionH !== undefined && o.model.capabilities.has("attention_write");
        // One α budget over M5: the mechanism test (when there is one) first, at α/2; the ladder shares the rest,
        // and gets the mechanism test's half too when it confirms (m5Budget).
        const explored = new Set(loop.explore.ids);
        const l4 =
          maxTier === "L4" && o.l4
            ? o.l4({
                cases: loop.explore.ids.map((id) => byId.get(id)!.case),
                sealed: new Set(probed.map((p) => p.case.id).filter((id) => !explored.has(id))),
              })
            : undefined;
        const planned = plannedCandidates(o.model, cases, {
          minTier,
          maxTier,
          ...(o.decodeImage ? { decodeImage: o.decodeImage } : {}),
          ...(l4 ? { l4 } : {}),
        }).planned.length;
        const budget = m5Budget(alpha, planned, mechanism);
        const gamma = budget.mechanism;
        let confirmed = false;
        const baselineOutputs = new Map(sealed.ids.map((id) => [id, byId.get(id)!.output]));
        let imageBiasSign: 1 | -1 | undefined;
        if (!best) {
          log.append("M5", "problem", {
            what: "mechanism test",
            why: "no hypothesis was SUPPORTED, so there is no mechanism to test; the repairs below are untargeted",
          });
        } else if (!attentionH || !o.model.capabilities.has("attention_write")) {
          log.append("M5", "problem", {
            what: "mechanism test",
            why: attentionH
              ? "the model exposes no attention_write input"
              : `no supported hypothesis names an attention mechanism this runtime can write (best: ${best.id} on ${best.signal})`,
          });
        } else {
          const tested = await testMechanism(ctx, attentionH, { cases, baseline, baselineOutputs }, gamma, log, {
            eMethod: `γ = α/2 = ${gamma.toPrecision(3)} (${planned} candidates share the other half)`,
            cases: casesNote,
          });
          done.add(tested.signature);
          confirmed = tested.causal;
          imageBiasSign = tested.imageBiasSign;
        }
        const ladderAlpha = budget.ladder(confirmed);
        await climb(ctx, cases, baseline, log, {
          minTier,
          maxTier,
          alpha: ladderAlpha,
          ...(mechanism
            ? {
                budgetNote: `α = ${alpha} over M5: the mechanism test at γ = α/2 = ${Number((alpha / 2).toPrecision(3))}; the ${planned} candidates share ${confirmed ? `all of α (the mechanism test confirmed and passed its half on)` : "the other half"}, γ = ${Number((ladderAlpha / Math.max(1, planned)).toPrecision(3))} each`,
              }
            : {}),
          ...(o.decodeImage ? { decodeImage: o.decodeImage } : {}),
          ...(imageBiasSign ? { imageBiasSign } : {}),
          ...(l4 ? { l4 } : {}),
          hypothesis: best ? { id: best.id, signal: best.signal, mechanism: best.mechanism } : null,
          done,
          baselineOutputs,
          casesNote,
          // The L4 recipe's data is drawn like the exploration failures: the diagnosis-only pool, never a sealed case.
          recipe: {
            mechanismConfirmed: confirmed,
            pool: loop.explore.ids.filter((_, i) => loop.explore.failed[i]).map((id) => byId.get(id)!.case),
            poolPassing: loop.explore.failed.filter((f) => !f).length,
          },
        });
      }),
    );
  }
  // The cases behind each hypothesis (exploration split only), with their images and attention, for the report.
  const maps = log.find("probe.finished")?.payload.maps as { rows: number; cols: number } | undefined;
  const evidenceOptions = { images, ...(maps ? { grid: { rows: maps.rows, cols: maps.cols } } : {}) };
  const evidence = await evidenceCases(loop.hypotheses, loop.explore, probed, evidenceOptions);
  if (loop.modes) {
    // Each mode's representatives: its failing cases nearest the mode's centre (exploration split only).
    const found = loop.modes;
    const columns = new Map(loop.explore.columns);
    const pseudo = found.modes.modes.map((mode, m) => {
      const column = `${MODE_COLUMN}.distance:${mode.id}`;
      columns.set(column, Array.from(modeDistances(loop.explore, found, m)));
      const stated = loop.hypotheses.find((h) => h.signal === `${MODE_COLUMN}=${mode.id}`)!;
      // Lower first: the distance to the mode's centre is what the cases are ordered by and show.
      return { ...stated, id: mode.id, column, kind: "numeric" as const, level: undefined, direction: -1 as const };
    });
    const modeEvidence = await evidenceCases(pseudo, { ...loop.explore, columns }, probed, evidenceOptions);
    log.append("report", "evidence.cases", {
      ...evidence,
      images: { ...evidence.images, ...modeEvidence.images },
      hypotheses: [...evidence.hypotheses, ...modeEvidence.hypotheses],
      note: `${evidence.note}; for each failure mode, its ${modeEvidence.hypotheses[0]?.failing.length ?? 3} failing cases nearest the mode's centre`,
    });
  } else log.append("report", "evidence.cases", { ...evidence });
  if (o.lessons)
    await recordLessons(o.lessons, buildReport(log.events), log, {
      at: new Date(now()).toISOString(),
      modes: (loop.modes?.modes.modes ?? []).map((m) => ({
        id: m.id,
        signal: m.defining[0]?.signal ?? m.id,
        size: m.size,
      })),
      previous: lessons?.all ?? [],
    });
  const fail = probed.filter((p) => !p.passed).length;
  log.append("report", "run.finished", {
    cases: probed.length,
    failures: fail,
    verdicts: loop.verified.map((v) => ({ id: v.id, verdict: v.verdict })),
  });
  return { report: buildReport(log.events), events: log.events, loop };
}
