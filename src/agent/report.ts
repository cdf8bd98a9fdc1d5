/**
 * The report, folded from the run's event log alone: whatever the loop knew
 * and did not log cannot appear in it. A log cut short (a killed run) folds
 * into a report marked incomplete.
 */
import { REPORT_VERSION, validateReport, type Report, type ReportHypothesis } from "../report/schema.ts";
import type { Association } from "./association.ts";
import type { Hypothesis } from "./diagnose.ts";
import type { RunEvent } from "./events.ts";
import type { SignalFinding } from "./explore.ts";
import type { VerifiedHypothesis } from "./verify.ts";
import { agenticOf, analysesOf } from "./agentic/report-section.ts";

type Payload = Record<string, unknown>;

function effectRow(a: Association["effect"]) {
  return {
    name: a.name,
    value: a.value,
    nullValue: a.nullValue,
    lo: a.interval.lo,
    hi: a.interval.hi,
    method: a.interval.method,
  };
}

/** POPE per split and CHAIR, from their analyzers' run-level findings, when they ran. */
function runLevelMetrics(ran: readonly RunEvent[]): Pick<NonNullable<Report["probe"]>, "pope" | "chair"> {
  const findings = (name: string) =>
    ran.find((e) => e.payload.analyzer === name)?.payload.findings as Payload | undefined;
  const pope = findings("pope")?.splits as NonNullable<Report["probe"]>["pope"] | undefined;
  const chair = findings("chair");
  return {
    ...(Array.isArray(pope) && pope.length ? { pope } : {}),
    ...(chair && typeof chair.captions === "number"
      ? {
          chair: {
            captions: chair.captions,
            chairI: chair.chairI as number | null,
            chairS: chair.chairS as number | null,
          },
        }
      : {}),
  };
}

/**
 * Builds the report from `events` and validates it against the report schema.
 *
 * Example: `buildReport(log.events)` → `{ format: "evalrx-report", version: 1, hypotheses: [...], … }`.
 */
export function buildReport(events: readonly RunEvent[]): Report {
  const first = (type: string) => events.find((e) => e.type === type);
  const all = (type: string) => events.filter((e) => e.type === type);
  const started = first("run.started");
  if (!started) throw new Error("buildReport(): the log has no run.started event; is this an EvalRx events.jsonl?");
  const s = started.payload as Payload;
  const data = (first("data.loaded")?.payload ?? {}) as Payload;
  const split = first("split.made")?.payload as Payload | undefined;
  const finished = first("run.finished");

  const tested = all("signal.tested").map((e) => e.payload as unknown as SignalFinding);
  const selected = first("signals.selected")?.payload as
    | { tried: number; selected: string[]; untestable: { name: string; reason: string }[]; procedure: string }
    | undefined;

  const stated = new Map(all("hypothesis.stated").map((e) => [(e.payload as unknown as Hypothesis).id, e]));
  const decided = new Map(all("hypothesis.decided").map((e) => [(e.payload as unknown as VerifiedHypothesis).id, e]));
  const frozen = first("hypotheses.frozen");
  const opened = first("sealed.opened");

  const hypotheses: ReportHypothesis[] = [...stated.values()].map((event) => {
    const h = event.payload as unknown as Hypothesis;
    const dEvent = decided.get(h.id);
    const d = dEvent?.payload as unknown as VerifiedHypothesis | undefined;
    return {
      id: h.id,
      signal: h.signal,
      mechanism: h.mechanism,
      author: h.author,
      statement: h.statement,
      direction: h.directionText,
      directionSign: h.direction,
      refutation: h.refutation,
      test: h.test,
      exploreN: h.exploreN,
      exploreEffect: h.exploreEffect,
      exploreE: h.exploreE,
      sealedN: d ? d.association.n : null,
      sealedEffect: d ? effectRow(d.association.effect) : null,
      eValue: d ? d.association.e : null,
      p: d ? d.association.p : null,
      eMethod: d?.association.eMethod ?? "",
      ...(d?.association.unit ? { unit: d.association.unit } : {}),
      ...(d?.association.clusters !== undefined ? { clusters: d.association.clusters } : {}),
      ...(d?.association.testDescription ? { testDescription: d.association.testDescription } : {}),
      ...(h.exploreP !== undefined ? { exploreP: h.exploreP } : {}),
      ...(d?.weight !== undefined ? { weight: d.weight, gamma: d.gamma } : {}),
      ...(h.merged?.length ? { merged: h.merged.map((m) => ({ signal: m.signal, relation: m.relation })) } : {}),
      verdict: d?.verdict ?? "INCONCLUSIVE",
      reason: d?.reason ?? "not decided: the run stopped before M4",
      gates: d ? { statistical: d.statisticalGate, protocol: d.protocolGate } : null,
      evidence: {
        stated: event.seq,
        frozen: frozen?.seq ?? null,
        sealedOpened: opened?.seq ?? null,
        decided: dEvent?.seq ?? null,
      },
    };
  });

  const stages = all("stage.finished").map((e) => ({ stage: String(e.payload.stage), ms: Number(e.payload.ms) }));
  const problems = all("problem").map((e) => ({ what: String(e.payload.what), why: String(e.payload.why) }));
  const methods = new Set<string>();
  for (const f of tested)
    if (!f.association.untestable)
      methods.add(`${f.association.testDescription ?? f.association.test}: ${f.association.eMethod}`);
  // The sealed e-value method carries each hypothesis' own w and γ; list the construction once.
  for (const h of hypotheses)
    if (h.eMethod) methods.add(`sealed ${h.test} (one-sided): ${h.eMethod.replace(/; here w = .*$/, "")}`);

  const probeFinished = first("probe.finished")?.payload as Report["probe"] | undefined;
  const probe = probeFinished ? { ...probeFinished, ...runLevelMetrics(all("analyzer.ran")) } : undefined;
  // An investigation labels its cases in M1: the label distribution is the probe's.
  const labelDistribution = probe
    ? { fail: probe.failures, pass: probe.cases - probe.failures }
    : ((data.labelDistribution as { fail: number; pass: number } | undefined) ?? { fail: 0, pass: 0 });
  const intervention = first("intervention.tested")?.payload as Report["intervention"] | undefined;
  const repairEvents = all("repair.tested").map(
    (e) => e.payload as unknown as NonNullable<Report["repairs"]>["candidates"][number],
  );
  const repairsDone = first("repairs.finished")?.payload as Payload | undefined;
  for (const r of repairEvents) methods.add(`repair ${r.tier}: ${r.eMethod}`);
  if (intervention) methods.add(`mechanism test: ${String((intervention as { eMethod?: string }).eMethod ?? "")}`);

  const modes = modesOf(events, hypotheses);
  const lessons = lessonsOf(events);

  const report = {
    format: "evalrx-report",
    version: REPORT_VERSION,
    runId: started.runId,
    kind: s.kind,
    question: s.question ?? "",
    createdAt: started.ts,
    finishedAt: finished?.ts ?? null,
    complete: Boolean(finished),
    provenance: {
      codeVersion: String(s.codeVersion ?? "unknown"),
      seed: Number(s.seed ?? 1),
      alpha: Number(s.alpha ?? 0.05),
      data: {
        source: String(data.source ?? ""),
        fingerprint: String(data.fingerprint ?? ""),
        n: Number(data.n ?? 0),
        labelColumn: (data.labelColumn as string | undefined) ?? null,
        labelDistribution,
        ...(data.sampled ? { sampled: String(data.sampled) } : {}),
      },
      ...(s.model ? { model: s.model as Record<string, unknown> } : {}),
      holdout: split
        ? {
            fraction: Number(split.fraction),
            by: String(split.by),
            exploreN: Number((split.explore as Payload).n),
            sealedN: Number((split.sealed as Payload).n),
            ...(split.clusters !== undefined && split.clusters !== null ? { clusters: Number(split.clusters) } : {}),
            ...(split.repair ? { repairN: Number((split.repair as Payload).n) } : {}),
          }
        : null,
    },
    signals: {
      tried: selected?.tried ?? 0,
      selected: selected?.selected ?? [],
      untestable: selected?.untestable ?? [],
      procedure: selected?.procedure ?? "",
      layers: ((first("layers.compared")?.payload.profiles ?? []) as NonNullable<Report["signals"]["layers"]>).map(
        (l) => ({
          family: l.family,
          layers: l.layers,
          n: l.n,
          statistic: l.statistic,
          p: l.p,
          auc: l.auc,
          strongest: l.strongest,
        }),
      ),
      tested: tested.map((f) => ({
        signal: f.signal,
        kind: f.kind,
        test: f.association.test,
        n: f.association.n,
        failures: f.association.failures,
        p: f.association.p,
        e: f.association.e,
        effect: effectRow(f.association.effect),
        selected: f.selected,
        ...(f.association.untestable ? { untestable: f.association.untestable } : {}),
        figure: f.figure,
        ...(f.association.unit ? { unit: f.association.unit } : {}),
        ...(f.association.clusters !== undefined ? { clusters: f.association.clusters } : {}),
        ...(f.association.testDescription ? { testDescription: f.association.testDescription } : {}),
      })),
    },
    hypotheses,
    problems,
    stages,
    ...(probe ? { probe } : {}),
    ...(intervention !== undefined ? { intervention } : {}),
    ...(repairsDone
      ? {
          repairs: {
            maxTier: String(repairsDone.maxTier),
            candidates: repairEvents,
            fixedBy: (repairsDone.fixedBy as string | null) ?? null,
            recommendation: String(repairsDone.recommendation ?? ""),
            ...(repairsDone.recipe ? { recipe: repairsDone.recipe as Record<string, unknown> } : {}),
            ...(repairsDone.budget
              ? { budget: repairsDone.budget as { alpha: number; tests: number; gamma: number; note?: string } }
              : {}),
            ...(repairsDone.cases ? { cases: String(repairsDone.cases) } : {}),
          },
        }
      : {}),
    eValueMethods: [...methods],
    ...(first("evidence.cases") ? { evidence: first("evidence.cases")!.payload } : {}),
    ...(agenticOf(events) ? { agentic: agenticOf(events) } : {}),
    ...(analysesOf(events).length ? { analyses: analysesOf(events) } : {}),
    ...(modes ? { modes } : {}),
    ...(lessons ? { lessons } : {}),
    ...(first("probes.searched") ? { probeSearch: first("probes.searched")!.payload } : {}),
  };
  return validateReport(JSON.parse(JSON.stringify(report)));
}

/** The failure modes (`modes.found`), each with its hypothesis and the sealed placement (`modes.placed`). */
function modesOf(events: readonly RunEvent[], hypotheses: readonly ReportHypothesis[]): Report["modes"] | undefined {
  const found = events.find((e) => e.type === "modes.found")?.payload as Payload | undefined;
  if (!found) return undefined;
  const placed = events.find((e) => e.type === "modes.placed")?.payload as
    { modes: { id: string; n: number; failures: number }[] } | undefined;
  const rows = (found.modes as Payload[]).map((m) => {
    const id = String(m.id);
    const h = hypotheses.find((x) => x.signal === `mode=${id}`);
    const sealed = placed?.modes.find((p) => p.id === id);
    return {
      id,
      size: Number(m.size),
      share: m.share as number | null,
      defining: m.defining as NonNullable<Report["modes"]>["modes"][number]["defining"],
      representatives: (m.representatives as string[]).map(String),
      ...(h ? { hypothesis: h.id } : {}),
      ...(m.placed ? { placed: m.placed as { n: number; failures: number } } : {}),
      ...(sealed ? { sealed: { n: sealed.n, failures: sealed.failures } } : {}),
    };
  });
  return {
    split: String(found.split),
    method: String(found.method),
    space: String(found.space),
    contrast: String(found.contrast),
    seed: Number(found.seed),
    k: Number(found.k),
    why: String(found.why),
    criterion: found.criterion as NonNullable<Report["modes"]>["criterion"],
    failing: Number(found.failing),
    passing: Number(found.passing),
    modes: rows,
    unused: (found.unused ?? []) as { signal: string; reason: string }[],
    ...(found.note ? { note: String(found.note) } : {}),
  };
}

/** The lessons read at the start (`lessons.used`) and how many were left at the end (`lessons.recorded`). */
function lessonsOf(events: readonly RunEvent[]): Report["lessons"] | undefined {
  const used = events.find((e) => e.type === "lessons.used")?.payload as Payload | undefined;
  if (!used) return undefined;
  const recorded = events.find((e) => e.type === "lessons.recorded")?.payload as Payload | undefined;
  return {
    store: String(used.store),
    use: String(used.use),
    used: used.used as NonNullable<Report["lessons"]>["used"],
    ...(Array.isArray(used.priors) ? { priors: used.priors as { subject: string; prior: number | null }[] } : {}),
    ...(Array.isArray(used.problems) && used.problems.length ? { problems: used.problems.map(String) } : {}),
    ...(recorded ? { recorded: Number(recorded.added) } : {}),
    ...(recorded && Array.isArray(recorded.lessons)
      ? {
          recordedLessons: (recorded.lessons as Payload[]).slice(0, 200) as NonNullable<
            Report["lessons"]
          >["recordedLessons"],
        }
      : {}),
  };
}
