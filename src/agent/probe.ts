/**
 * M1 probe: label every case with the eval's evaluators (a resumable eval run
 * in the store), detect the model kind, rank the analyzers by the protocol's
 * hints, run them (one teacher-forced forward per case, plus any extra
 * generations an analyzer asks for), and keep each case's signals in the
 * store as it goes, so a resumed run never judges or probes a case twice.
 */
import { rankAnalyzers, type ProbeItem } from "../analyzers/index.ts";
import type { FailureCase, ImagePixels, Model, ModelInput, Reduction, Trace } from "../core/index.ts";
import { imageUses, plannedImages, runEval, type Evaluator } from "../evals/index.ts";
import type { ItemRecord, Store } from "../store/index.ts";
import type { EventLog } from "./events.ts";
import { inOrder } from "./in-order.ts";
import { writeBehind } from "./write-behind.ts";
import type { Judge } from "./judge.ts";
import { protocolTags, type ExperimentProtocol } from "./protocol.ts";

const TAGS = ["attention", "image", "sink", "uncertainty", "layer", "prompt", "prior", "length", "tool", "content"];

/**
 * The analyzer tags a protocol's question points to: the keyword rules, plus
 * whatever a configured judge names from the known tags (unknown words ignored).
 * Example: `await hintTags({ question: "Is the model unsure when it fails?" })` → `["uncertainty"]`.
 */
export async function hintTags(protocol: ExperimentProtocol, judge?: Judge): Promise<{ tags: string[]; by: string }> {
  const rules = protocolTags(protocol);
  if (!judge) return { tags: rules, by: "rules" };
  const answer = await judge(
    [
      `Question about a model's failures: ${protocol.question}`,
      ...(protocol.failurePatterns?.length ? [`Suspected patterns: ${protocol.failurePatterns.join("; ")}`] : []),
      `Which of these topics should the analysis look at first? ${TAGS.join(", ")}.`,
      "Answer with the topic names only, comma-separated.",
    ].join("\n"),
  );
  const named = answer
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => TAGS.includes(w));
  return { tags: [...new Set([...rules, ...named])], by: named.length ? "rules+judge" : "rules" };
}

export type ModelKind = "VLM" | "LLM" | "agent";

/** Which kind of system is being probed: a vision-language model, a text model, or an agent calling tools. */
export function modelKind(model: Model, cases: readonly FailureCase[]): ModelKind {
  if (cases.some((c) => c.tags.includes("tool") || c.meta.tool_calls !== undefined)) return "agent";
  return model.spec.modalities.has("image") ? "VLM" : "LLM";
}

export interface ProbeOptions {
  readonly store: Store;
  readonly model: Model;
  readonly dataset: { readonly id: string; readonly cases: readonly FailureCase[] };
  readonly evaluators: readonly Evaluator[];
  readonly images: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
  readonly protocol: ExperimentProtocol;
  readonly runId: string;
  readonly maxNewTokens?: number;
  /** Model calls kept in flight (default 1): more only pays when the model runs calls side by side (several workers). */
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
  /** Called after each case is probed (progress; tests kill the process here). */
  readonly onCase?: (done: number, total: number) => void;
  /** When configured, maps the question to analyzer tags too (the rules always do). */
  readonly judge?: Judge;
  /** Called as cases are labelled (judged) by the evaluators. */
  readonly onLabel?: (done: number, total: number) => void;
  /** Reorders the ranked analyzers (earlier runs' lessons); what each analyzer measures is unchanged. */
  readonly reorder?: <T extends { readonly analyzer: { readonly name: string } }>(ranked: readonly T[]) => T[];
}

/** One case after M1: its label, answer, per-case signals, and the last-layer rollout grid (for the attention-guided crop). */
export interface ProbedCase {
  readonly case: FailureCase;
  readonly output: string;
  readonly passed: boolean;
  readonly signals: Readonly<Record<string, number>>;
  readonly rollout?: readonly number[];
}

async function openOrResumeEval(o: ProbeOptions, runId: string): Promise<{ items: ItemRecord[]; resumed: boolean }> {
  const existing = await o.store.getRun(runId);
  if (existing?.status === "finished") return { items: await o.store.items(runId), resumed: true };
  await runEval({
    store: o.store,
    dataset: o.dataset,
    model: o.model,
    evaluators: o.evaluators,
    runId,
    ...(existing ? { resume: runId } : {}),
    images: o.images,
    cluster: o.dataset.cases.some((c) => c.cluster !== undefined),
    generation: { maxNewTokens: o.maxNewTokens ?? 24 },
    ...(o.concurrency ? { concurrency: o.concurrency } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.onLabel ? { onProgress: (p: { done: number; total: number }) => o.onLabel!(p.done, p.total) } : {}),
  });
  return { items: await o.store.items(runId), resumed: existing !== undefined };
}

/**
 * Runs M1 and logs `probe.planned`, `analyzer.ran` per analyzer and `probe.finished`.
 * Example: `const probed = await probe({ store, model, dataset, evaluators: [yesNo()], images, protocol, runId: "inv-1" }, log)`.
 */
export async function probe(o: ProbeOptions, log: EventLog): Promise<ProbedCase[]> {
  const cases = o.dataset.cases;
  const kind = modelKind(o.model, cases);
  const { tags: hints, by: hintsBy } = await hintTags(o.protocol, o.judge);
  const ranked = o.reorder
    ? o.reorder(rankAnalyzers(o.model.capabilities, hints))
    : rankAnalyzers(o.model.capabilities, hints);
  const runnable = ranked.filter((a) => a.runnable).map((a) => a.analyzer);
  log.append("M1", "probe.planned", {
    cases: cases.length,
    modelKind: kind,
    hints,
    hintsBy,
    analyzers: ranked.map((a, rank) => ({
      name: a.analyzer.name,
      rank: rank + 1,
      score: a.score,
      runnable: a.runnable,
      missing: a.missing,
    })),
  });

  // 1. Labels: the eval's own evaluators, in a resumable eval run.
  const labelRun = `${o.runId}-m1-label`;
  const labels = await openOrResumeEval(o, labelRun);
  const byCase = new Map(labels.items.map((i) => [i.caseId, i]));
  if (o.signal?.aborted) throw new Error("cancelled during M1 labelling");

  // 2. Probe: one teacher-forced forward per case with every reduction the runnable analyzers read.
  const probeRun = `${o.runId}-m1-probe`;
  if (!(await o.store.getRun(probeRun)))
    await o.store.createRun({
      id: probeRun,
      kind: "probe",
      dataset: o.dataset.id,
      model: o.model.spec.key,
      fingerprint: labelRun,
      status: "running",
      startedAt: new Date().toISOString(),
      config: { analyzers: runnable.map((a) => a.name), labels: labelRun },
    });
  const stored = new Map((await o.store.items(probeRun)).map((i) => [i.caseId, i]));
  const reductions = [...new Set(runnable.flatMap((a) => a.reductions))] as Reduction[];
  const wantsTrace = reductions.length > 0;
  let done = stored.size;
  const todo = [...cases.entries()].filter(([, c]) => !stored.has(c.id));
  // Each image read once, kept from its first case to its last (POPE asks about one image three times), under a
  // byte budget: a large dataset's images are not all held at once.
  const images = plannedImages(imageUses(todo.map(([, c]) => c.input.image)));
  // Records are stored in case order behind the forwards: the next case's forward does not wait on the store.
  const records = writeBehind(async (batch: ItemRecord[]) => {
    await o.store.appendItems(probeRun, batch, {
      done: done + batch.length,
      total: cases.length,
      updatedAt: new Date().toISOString(),
    });
    done += batch.length;
    o.onCase?.(done, cases.length);
  });
  // Several cases' model calls may be in flight (`concurrency`); their records are stored one by one in case order.
  const probing = inOrder(
    todo,
    o.concurrency ?? 1,
    async ([index, c]) => {
      if (o.signal?.aborted) throw new Error("cancelled during M1 probing");
      const label = byCase.get(c.id);
      if (!label) throw new Error(`M1: case '${c.id}' has no label in run '${labelRun}'`);
      let image: Uint8Array | ImagePixels | undefined;
      const ref = c.input.image;
      if (ref !== undefined) image = await images.take(ref, () => o.images(ref, c));
      const input: ModelInput = { prompt: c.input.prompt, ...(image ? { image } : {}) };
      const usable = image
        ? reductions
        : reductions.filter((r) => !["imageAttentionShare", "imageAttentionMap", "rollout"].includes(r));
      let trace: Trace | undefined;
      if (wantsTrace) trace = await o.model.forward(input, { answer: label.output || undefined, reductions: usable });
      const base: ProbeItem = { case: c, output: label.output, passed: label.passed, ...(trace ? { trace } : {}) };
      const extra: Record<string, unknown> = {};
      for (const a of runnable)
        if (a.probe)
          Object.assign(
            extra,
            await a.probe(base, {
              input,
              generate: (x) => o.model.generate(x, { maxNewTokens: o.maxNewTokens ?? 24 }),
            }),
          );
      const item: ProbeItem = { ...base, extra };
      const signals: Record<string, number> = {};
      for (const a of runnable) if (a.signals) Object.assign(signals, a.signals(item));
      const rollout = trace?.reductions.rollout ? Array.from(trace.reductions.rollout.data) : undefined;
      const kept = trace ? packTrace(trace) : undefined;
      const record: ItemRecord = {
        runId: probeRun,
        caseId: c.id,
        repeat: 0,
        index,
        output: label.output,
        passed: label.passed,
        checks: [
          {
            name: "probe",
            passed: true,
            detail: { extra, ...(rollout ? { rollout } : {}), ...(kept ? { trace: kept } : {}) },
          },
        ],
        latencyMs: 0,
        signals,
      };
      return record;
    },
    (record, [, c]) => {
      stored.set(c.id, record);
      records.push(record);
    },
  );
  // Stopped (cancelled, or a forward failed): what was probed before the stop is stored before the stage says so.
  await probing.catch(async (error: unknown) => {
    await records.flush().catch(() => undefined);
    throw error;
  });
  await records.flush();
  await o.store.updateRun(probeRun, { status: "finished", finishedAt: new Date().toISOString() });

  // 3. Run-level analyses over every case, from the stored records.
  const probed: ProbedCase[] = cases.map((c) => {
    const r = stored.get(c.id)!;
    const detail = (r.checks[0]?.detail ?? {}) as { extra?: Record<string, unknown>; rollout?: number[] };
    return {
      case: c,
      output: r.output,
      passed: r.passed,
      signals: r.signals ?? {},
      ...(detail.rollout ? { rollout: detail.rollout } : {}),
    };
  });
  const items: ProbeItem[] = probed.map((p, i) => {
    const detail = (stored.get(cases[i]!.id)!.checks[0]?.detail ?? {}) as {
      extra?: Record<string, unknown>;
      trace?: PackedTrace;
    };
    return {
      case: p.case,
      output: p.output,
      passed: p.passed,
      extra: detail.extra ?? {},
      ...(detail.trace ? { trace: unpackTrace(detail.trace) } : {}),
    };
  });
  const findings: { analyzer: string; summary: string }[] = [];
  let maps: { rows: number; cols: number; fail: number[]; pass: number[] } | undefined;
  for (const a of runnable) {
    const result = a.run(items);
    findings.push({ analyzer: a.name, summary: result.summary });
    log.append("M1", "analyzer.ran", {
      analyzer: a.name,
      summary: result.summary,
      findings: result.findings,
      parameters: a.parameters,
      requires: a.requires,
    });
    const mean = result.artifacts?.meanMaps as { fail: number[]; pass: number[] } | undefined;
    if (a.name !== "attentionRollout" || !mean || !(mean.fail.length || mean.pass.length)) continue;
    const grid = items.find((i) => i.trace?.reductions.rollout)?.trace?.reductions.rollout?.shape;
    if (grid) maps = { rows: grid[0]!, cols: grid[1]!, fail: mean.fail, pass: mean.pass };
  }
  const failures = probed.filter((p) => !p.passed).length;
  log.append("M1", "probe.finished", {
    cases: cases.length,
    failures,
    modelKind: kind,
    labelRun,
    probeRun,
    resumed: labels.resumed,
    analyzers: ranked.map((a, rank) => ({
      name: a.analyzer.name,
      rank: rank + 1,
      tags: [...a.analyzer.tags],
      ran: a.runnable,
      ...(a.runnable ? {} : { reason: `the model cannot give ${a.missing.map((m) => `'${m}'`).join(", ")}` }),
    })),
    findings,
    ...(maps ? { maps } : {}),
  });
  return probed;
}

/** A trace's small reductions as plain JSON (NaN as null), kept with the case so a resumed run can rerun analyzers. */
export interface PackedTrace {
  readonly tokenIds: number[];
  readonly imagePositions: number[];
  readonly answerPositions: number[];
  readonly reductions: Record<string, { shape: number[]; axes: string[]; data: (number | null)[] }>;
}

function packTrace(t: Trace): PackedTrace {
  const reductions: PackedTrace["reductions"] = {};
  for (const [name, r] of Object.entries(t.reductions))
    if (r && name !== "fullAttention")
      reductions[name] = {
        shape: [...r.shape],
        axes: [...r.axes],
        data: Array.from(r.data, (x) => (Number.isFinite(x) ? x : null)),
      };
  return {
    tokenIds: Array.from(t.tokenIds),
    imagePositions: Array.from(t.imagePositions),
    answerPositions: Array.from(t.answerPositions),
    reductions,
  };
}

function unpackTrace(p: PackedTrace): Trace {
  const reductions: Trace["reductions"] = {};
  for (const [name, r] of Object.entries(p.reductions))
    (reductions as Record<string, unknown>)[name] = {
      shape: r.shape,
      axes: r.axes,
      data: Float32Array.from(r.data, (x) => (x === null ? NaN : x)),
    };
  return {
    tokens: [],
    tokenIds: Int32Array.from(p.tokenIds),
    imagePositions: Int32Array.from(p.imagePositions),
    answerPositions: Int32Array.from(p.answerPositions),
    reductions,
  };
}
