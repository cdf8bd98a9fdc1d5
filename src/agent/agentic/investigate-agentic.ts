/**
 * `investigate --agentic`: the same investigation on a model as the fixed
 * M1–M5 pipeline, with the order decided by a judge turn by turn and the
 * rules kept by the host (`runAgentic`). M1 is the same probe, M2–M4 the same
 * tests, M5 the same mechanism test and ladder under one α budget; the report
 * is folded from the log, with the judge's path and every analysis as it ran.
 */
import type { FailureCase } from "../../core/index.ts";
import type { Report } from "../../report/schema.ts";
import { EventLog, type RunEvent } from "../events.ts";
import { logEvidence } from "../evidence.ts";
import { probedTable, SIGNAL_TAGS, type InvestigateOptions } from "../investigate.ts";
import { testMechanism } from "../mechanism-test.ts";
import { growDataset, type ProbeSearchPlan } from "../probes/grow-dataset.ts";
import { probe, type ProbedCase } from "../probe.ts";
import { TIERS, climb, m5Budget, plannedCandidates } from "../repair.ts";
import { buildReport } from "../report.ts";
import type { SandboxRunner } from "../sandbox/protocol.ts";
import { runAgentic, type AgenticJudge, type AgenticPipeline, type AgenticResult } from "./host.ts";
import { rulePolicy } from "./judges.ts";
import { WRITABLE_ATTENTION, type ToolName } from "./tools.ts";

export interface AgenticInvestigateOptions {
  /** Who picks the tools (default: the rule policy). */
  readonly judge?: AgenticJudge;
  /** Where analyses run (a locked worker in the page, a locked child in Node); without one, no run_analysis. */
  readonly sandbox?: SandboxRunner;
  readonly maxTurns?: number;
  readonly modelCallBudget?: number;
  readonly caps?: Partial<Record<ToolName, number>>;
}

/** The fixed loop's options, the agentic ones, and a probe search that may ask the judge for paraphrases. */
export type AgenticOptions = InvestigateOptions & {
  readonly agentic?: AgenticInvestigateOptions;
  /** `judgeParaphrases`: `search_probes` also asks the `judge` endpoint for rewordings of the seeds' questions. */
  readonly searchProbes?: ProbeSearchPlan;
};

/**
 * Runs the judge-decided investigation and returns the report with its events.
 *
 * @example await investigateAgentic({ ...investigateOptions, agentic: { judge: rulePolicy(), sandbox: childSandbox() } })
 */
export async function investigateAgentic(
  o: AgenticOptions,
): Promise<{ report: Report; events: readonly RunEvent[]; agentic: AgenticResult }> {
  if (o.searchProbes?.judgeParaphrases && !o.judge)
    throw new Error(
      "judge paraphrases need a judge endpoint (--judge URL, or the page's OpenAI-compatible judge): the rule policy and a bundled model write no checked rewordings",
    );
  if (o.previous?.length)
    throw new Error("investigate --agentic does not resume an interrupted run; start it again in a new --out folder");
  const lock = await o.store.lockRun(o.runId);
  try {
    return await run(o);
  } finally {
    await lock.release();
  }
}

async function run(
  o: AgenticOptions,
): Promise<{ report: Report; events: readonly RunEvent[]; agentic: AgenticResult }> {
  const seed = o.seed ?? 1;
  const alpha = o.alpha ?? 0.05;
  const maxTier = o.maxTier ?? "L3b";
  if (maxTier !== "none" && !TIERS.includes(maxTier))
    throw new Error(`max tier '${maxTier}' must be one of ${TIERS.join(", ")} or none`);
  const judge = o.agentic?.judge ?? rulePolicy({ searchProbes: o.searchProbes !== undefined });
  const log = new EventLog({ runId: o.runId, now: o.now, sink: o.sink });
  log.append("setup", "run.started", {
    kind: "investigate",
    question: o.protocol.question,
    seed,
    alpha,
    holdout: o.holdout ?? 0.4,
    maxTier,
    codeVersion: o.codeVersion ?? "unknown",
    judge: o.judge ? (o.judge.id ?? "configured") : "rules",
    agentic: { judge: judge.id },
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

  let probed: ProbedCase[] = [];
  const byId = () => new Map(probed.map((p) => [p.case.id, p]));
  const ctx = {
    store: o.store,
    model: o.model,
    dataset: o.dataset,
    evaluators: o.evaluators,
    images: o.images,
    runId: o.runId,
    ...(o.maxNewTokens ? { maxNewTokens: o.maxNewTokens } : {}),
    ...(o.concurrency ? { concurrency: o.concurrency } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
  };
  /** M5's cases: the sealed split M4 opened (no separate repair split in the agentic loop, as the report says). */
  const m5Cases = (ids: readonly string[]) => {
    const map = byId();
    const cases: FailureCase[] = ids.map((id) => map.get(id)!.case);
    const baseline = new Map(ids.map((id) => [id, map.get(id)!.passed]));
    const outputs = new Map(ids.map((id) => [id, map.get(id)!.output]));
    return { cases, baseline, outputs };
  };
  const canWrite = o.model.capabilities.has("attention_write");
  const planned = () =>
    plannedCandidates(
      o.model,
      probed.map((p) => p.case),
      {
        maxTier: maxTier === "none" ? "L1" : maxTier,
        ...(o.decodeImage ? { decodeImage: o.decodeImage } : {}),
      },
    ).planned.length;
  // One α over M5, fixed before any M5 test: the mechanism test (possible whenever the model takes attention
  // writes, whether or not the judge asks for it) gets α/2, the ladder the rest, and the other half once confirmed.
  let confirmed = false;
  let imageBiasSign: 1 | -1 | undefined;
  const done = new Set<string>();
  const casesNote = (n: number) =>
    `reused: the ${n} sealed cases M4 decided the hypotheses on (the agentic loop keeps no separate repair split)`;

  const pipeline: AgenticPipeline = {
    probe: {
      cost: 2 * o.dataset.cases.length,
      run: async (probeLog) => {
        probed = await probe(
          {
            store: o.store,
            model: o.model,
            dataset: o.dataset,
            evaluators: o.evaluators,
            images: o.images,
            protocol: o.protocol,
            runId: o.runId,
            ...(o.maxNewTokens ? { maxNewTokens: o.maxNewTokens } : {}),
            ...(o.concurrency ? { concurrency: o.concurrency } : {}),
            ...(o.signal ? { signal: o.signal } : {}),
            ...(o.onProbeCase ? { onCase: o.onProbeCase } : {}),
            ...(o.onLabelCase ? { onLabel: o.onLabelCase } : {}),
            ...(o.judge ? { judge: o.judge } : {}),
          },
          probeLog,
        );
        const failures = probed.filter((p) => !p.passed).length;
        return {
          table: probedTable(probed, SIGNAL_TAGS),
          // One generation to label each case and one teacher-forced forward to read its internals.
          modelCalls: 2 * probed.length,
          result: `${probed.length} cases labelled and probed (${failures} failing)`,
        };
      },
    },
    // The probe search seeds from the exploration split alone (the split is drawn by then): the failing
    // variants it keeps are stored as a new dataset, exploratory evidence a later investigation can decide on.
    searchProbes: {
      defaultBudget: o.searchProbes?.budget ?? 200,
      run: async (budget, state, searchLog) => {
        const explore = new Set(state.explore!.ids);
        const grown = await growDataset(
          {
            store: o.store,
            model: o.model,
            dataset: {
              id: `${o.dataset.id}@explore-s${seed}`,
              cases: o.dataset.cases.filter((c) => explore.has(c.id)),
            },
            images: o.images,
            budget,
            seed,
            ...(o.signal ? { signal: o.signal } : {}),
            ...(o.now ? { now: o.now } : {}),
            ...(o.searchProbes?.judgeParaphrases && o.judge ? { paraphraser: o.judge } : {}),
          },
          searchLog,
        );
        const searched = searchLog.all("probes.searched").at(-1)?.payload;
        const calls = Number(searched?.calls ?? 0) + Number(searched?.seedCalls ?? 0);
        const lift = typeof searched?.lift === "number" ? searched.lift : 0;
        return {
          result: grown.added
            ? `${grown.added} failing variants kept (failure rate ${lift.toFixed(2)}× the seeds'), stored as dataset ${grown.id}; exploratory: they are not in this run's split, investigate that dataset to decide on them`
            : searched
              ? "no failing variant found within the budget"
              : "no case asks a question the search can edit: nothing searched",
          modelCalls: calls,
          failures: grown.added,
          lift,
          detail: { dataset: grown.id, added: grown.added },
        };
      },
    },
    ...(maxTier === "none"
      ? {}
      : {
          surgery: {
            cost: (state) => state.sealed?.n ?? 0,
            refuse: (_state, h) =>
              !canWrite
                ? "the model exposes no attention_write input: there is no internal to write"
                : WRITABLE_ATTENTION.test(h.signal)
                  ? undefined
                  : `${h.id} rests on ${h.signal}, not on an attention signal this runtime can write (image share/ratio, sink mass)`,
            run: async (state, h, m5Log) => {
              const { cases, baseline, outputs } = m5Cases(state.sealed!.open("M5").ids);
              const gamma = m5Budget(alpha, planned(), canWrite).mechanism;
              const tested = await testMechanism(ctx, h, { cases, baseline, baselineOutputs: outputs }, gamma, m5Log, {
                eMethod: `γ = α/2 = ${gamma.toPrecision(3)}`,
                cases: casesNote(cases.length),
              });
              done.add(tested.signature);
              confirmed = tested.causal;
              imageBiasSign = tested.imageBiasSign ?? imageBiasSign;
              return {
                result: `${tested.causal ? "causal" : "not shown causal"}: failures ${tested.baselineFailures} → ${tested.interventionFailures} (${tested.fixed} fixed, ${tested.broken} broken, p = ${tested.p.toPrecision(2)} at γ = ${gamma.toPrecision(2)})`,
                modelCalls: tested.n,
                causal: tested.causal,
                p: tested.p,
              };
            },
          },
          fix: {
            cost: (state) => (state.sealed?.n ?? 0) * Math.max(1, planned()),
            run: async (state, m5Log) => {
              const { cases, baseline, outputs } = m5Cases(state.sealed!.open("M5").ids);
              const failures = [...baseline.values()].filter((p) => !p).length;
              if (failures === 0) {
                m5Log.append("M5", "problem", { what: "M5", why: "no sealed case fails: there is nothing to repair" });
                return { result: "no sealed case fails: nothing to repair", tried: 0, validated: 0 };
              }
              const supported = (state.verified ?? [])
                .filter((v) => v.verdict === "SUPPORTED")
                .sort((a, b) => a.association.p - b.association.p);
              const best = supported.length ? state.hypotheses!.find((h) => h.id === supported[0]!.id)! : null;
              const k = planned();
              const ladderAlpha = m5Budget(alpha, k, canWrite).ladder(confirmed);
              const before = m5Log.all("repair.tested").length;
              const { fixedBy } = await climb(ctx, cases, baseline, m5Log, {
                maxTier: maxTier as (typeof TIERS)[number],
                alpha: ladderAlpha,
                ...(canWrite
                  ? {
                      budgetNote: `α = ${alpha} over M5: the mechanism test at γ = α/2; the ${k} candidates share ${confirmed ? "all of α (the mechanism test confirmed)" : "the other half"}, γ = ${Number((ladderAlpha / Math.max(1, k)).toPrecision(3))} each`,
                    }
                  : {}),
                ...(o.decodeImage ? { decodeImage: o.decodeImage } : {}),
                ...(imageBiasSign ? { imageBiasSign } : {}),
                hypothesis: best ? { id: best.id, signal: best.signal, mechanism: best.mechanism } : null,
                done,
                baselineOutputs: outputs,
                casesNote: casesNote(cases.length),
              });
              const tested = m5Log.all("repair.tested").slice(before);
              const tried = tested.length;
              const validated = tested.filter((e) => e.payload.validated === true).length;
              const recommendation = m5Log.all("repairs.finished").at(-1)?.payload.recommendation;
              return {
                result: `${tried} candidates tested against the baseline; ${fixedBy ? `fixed by ${fixedBy}` : `none validated${typeof recommendation === "string" ? ` (${recommendation})` : ""}`}`,
                modelCalls: tried * cases.length,
                tried,
                validated,
                ...(fixedBy ? { best: fixedBy } : {}),
              };
            },
          },
        }),
  };

  const out = await runAgentic(pipeline, judge, log, {
    protocol: o.protocol,
    seed,
    alpha,
    ...(o.holdout !== undefined ? { holdout: o.holdout } : {}),
    ...(o.screen ? { screen: o.screen } : {}),
    ...(o.agentic?.sandbox ? { sandbox: o.agentic.sandbox } : {}),
    ...(o.agentic?.maxTurns ? { maxTurns: o.agentic.maxTurns } : {}),
    ...(o.agentic?.modelCallBudget ? { modelCallBudget: o.agentic.modelCallBudget } : {}),
    ...(o.agentic?.caps ? { caps: o.agentic.caps } : {}),
    ...(o.judge ? { wordingJudge: o.judge } : {}),
    resamples: { explore: 200, sealed: 1000 },
    ...(o.signal ? { signal: o.signal } : {}),
  });
  if (out.state.hypotheses && out.state.explore && probed.length) {
    const maps = log.find("probe.finished")?.payload.maps as { rows: number; cols: number } | undefined;
    await logEvidence(log, out.state.hypotheses, out.state.explore, probed, {
      images: o.images,
      ...(maps ? { grid: { rows: maps.rows, cols: maps.cols } } : {}),
    });
  }
  log.append("report", "run.finished", {
    cases: probed.length,
    failures: probed.filter((p) => !p.passed).length,
    verdicts: (out.state.verified ?? []).map((v) => ({ id: v.id, verdict: v.verdict })),
  });
  return { report: buildReport(log.events), events: log.events, agentic: out };
}
