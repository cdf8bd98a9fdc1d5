/**
 * What each stage of an investigation has shown so far, read from its event
 * log alone (the live events of this tab's job, or the stored log after a
 * reload): the stage rail M1→M5 and the data of each stage's panel. Pure, so
 * a log folds the same way in the page, in a test and after a reload.
 */
import type { RunEvent } from "../../../agent/events.ts";

export type StageId = "M1" | "M2" | "M3" | "M4" | "M5";

export const STAGES: readonly { readonly id: StageId; readonly title: string; readonly about: string }[] = [
  { id: "M1", title: "Probe", about: "label every case, run the analyzers on the model's internals" },
  { id: "M2", title: "Explore", about: "test each signal against failure on the exploration split" },
  { id: "M3", title: "Diagnose", about: "turn the screened signals into falsifiable hypotheses, then freeze them" },
  { id: "M4", title: "Verify", about: "decide each hypothesis once on the sealed split" },
  { id: "M5", title: "Repair", about: "test the mechanism, climb the repair ladder to the ceiling" },
];

/** Where a run stands as a whole. */
export type RunState = "running" | "finished" | "cancelled" | "failed" | "interrupted";

/** A stage on the rail. */
export interface StageView {
  readonly id: StageId;
  readonly title: string;
  readonly about: string;
  readonly state: "waiting" | "running" | "done" | "stopped" | "skipped";
  /** Wall time of the stage, when it finished. */
  readonly ms?: number;
  /** Problems the stage logged (`what: why`). */
  readonly problems: readonly string[];
}

type Payload = Record<string, unknown>;

const byType = (events: readonly RunEvent[], type: string) => events.filter((e) => e.type === type);
const firstOf = (events: readonly RunEvent[], type: string) => events.find((e) => e.type === type);
const num = (x: unknown): number => (typeof x === "number" ? x : Number.NaN);

/**
 * The rail: each stage waiting, running, done, stopped (the run ended inside
 * it) or skipped (the run finished without it: the ceiling was none).
 *
 * @example stageRail(events, "running").map((s) => s.state) // ["done", "running", "waiting", "waiting", "waiting"]
 */
export function stageRail(events: readonly RunEvent[], run: RunState): StageView[] {
  const finished = events.some((e) => e.type === "run.finished");
  return STAGES.map((stage) => {
    const started = events.some((e) => e.type === "stage.started" && e.payload["stage"] === stage.id);
    const end = events.find((e) => e.type === "stage.finished" && e.payload["stage"] === stage.id);
    const problems = events
      .filter((e) => e.type === "problem" && e.stage === stage.id)
      .map((e) => `${String(e.payload["what"])}: ${String(e.payload["why"])}`);
    const state: StageView["state"] = end
      ? "done"
      : started
        ? run === "running"
          ? "running"
          : "stopped"
        : finished
          ? "skipped"
          : "waiting";
    return { ...stage, state, ...(end ? { ms: num(end.payload["ms"]) } : {}), problems };
  });
}

/** The stage the run is in (or stopped in), or the last one done. */
export function currentStage(rail: readonly StageView[]): StageId {
  const live = rail.find((s) => s.state === "running" || s.state === "stopped");
  if (live) return live.id;
  const done = rail.filter((s) => s.state === "done");
  return done.at(-1)?.id ?? "M1";
}

/** M1: what was planned, which analyzers ran and what they found, and the labels. */
export interface ProbeView {
  readonly cases?: number;
  readonly modelKind?: string;
  readonly hints: readonly string[];
  readonly analyzers: readonly {
    readonly name: string;
    readonly rank: number;
    readonly runnable: boolean;
    /** Why it cannot run on this model (missing capabilities). */
    readonly missing: readonly string[];
    /** Its one-line finding, once it ran. */
    readonly summary?: string;
  }[];
  /** Once every case is labelled and probed. */
  readonly labels?: { readonly pass: number; readonly fail: number };
  /** True when the labels were read back from an earlier attempt (nothing judged again). */
  readonly resumed?: boolean;
}

export function probeView(events: readonly RunEvent[]): ProbeView {
  const planned = firstOf(events, "probe.planned")?.payload;
  const finished = firstOf(events, "probe.finished")?.payload;
  const summaries = new Map(
    byType(events, "analyzer.ran").map((e) => [String(e.payload["analyzer"]), String(e.payload["summary"] ?? "")]),
  );
  const analyzers = ((planned?.["analyzers"] ?? []) as Payload[]).map((a) => ({
    name: String(a["name"]),
    rank: num(a["rank"]),
    runnable: a["runnable"] === true,
    missing: ((a["missing"] ?? []) as unknown[]).map(String),
    ...(summaries.has(String(a["name"])) ? { summary: summaries.get(String(a["name"]))! } : {}),
  }));
  const cases = num(finished?.["cases"] ?? planned?.["cases"]);
  const fail = num(finished?.["failures"]);
  return {
    ...(Number.isFinite(cases) ? { cases } : {}),
    ...(planned?.["modelKind"] !== undefined ? { modelKind: String(planned["modelKind"]) } : {}),
    hints: ((planned?.["hints"] ?? []) as unknown[]).map(String),
    analyzers,
    ...(finished && Number.isFinite(fail) ? { labels: { fail, pass: cases - fail } } : {}),
    ...(finished ? { resumed: finished["resumed"] === true } : {}),
  };
}

/** One signal M2 tested on the exploration split. */
export interface SignalRow {
  readonly signal: string;
  readonly kind: string;
  readonly test: string;
  readonly unit?: string;
  readonly n: number;
  readonly p: number;
  readonly e: number;
  readonly effect: { readonly name: string; readonly value: number; readonly lo: number; readonly hi: number };
  /** Passed the screen: it goes on to M3. */
  readonly selected: boolean;
  readonly untestable?: string;
  /** 1-based rank by e-value (largest first) among the testable signals. */
  readonly rank: number;
  /** The e-BH bar at this rank, m / (α·rank): e-BH at α over the m signals tried would reject down to the last rank whose e clears its bar. */
  readonly ebhBar: number;
}

export interface ExploreView {
  readonly rows: readonly SignalRow[];
  /** Signals tested (the m of the e-BH line), known once the screen ran. */
  readonly tried?: number;
  readonly alpha: number;
  /** The screen in words (what decides M3's input). */
  readonly procedure?: string;
  readonly untestable: readonly { readonly name: string; readonly reason: string }[];
  readonly selected: readonly string[];
  /** How many signals e-BH at α over all m tried would reject (for reference: M2 screens, it does not decide). */
  readonly ebhRejections: number;
  /** Exploration split: cases and failures. */
  readonly split?: { readonly explore: number; readonly failures: number; readonly sealed: number };
}

/**
 * M2's signals ranked by e-value as their tests finish, each with its e-BH bar
 * m/(α·k) at its rank k over the m signals tested so far (the e-BH line).
 *
 * @example exploreView(events).rows[0] // { signal: "tokenEntropy.answer", e: 20.8, rank: 1, ebhBar: 20, … }
 */
export function exploreView(events: readonly RunEvent[], alpha = 0.05): ExploreView {
  const tested = byType(events, "signal.tested").map((e) => {
    const p = e.payload;
    const a = (p["association"] ?? {}) as Payload;
    const effect = (a["effect"] ?? {}) as Payload;
    const interval = (effect["interval"] ?? {}) as Payload;
    return {
      signal: String(p["signal"]),
      kind: String(p["kind"]),
      test: String(a["test"] ?? ""),
      ...(a["unit"] !== undefined ? { unit: String(a["unit"]) } : {}),
      n: num(a["n"]),
      p: num(a["p"]),
      e: num(a["e"]),
      effect: {
        name: String(effect["name"] ?? ""),
        value: num(effect["value"]),
        lo: num(interval["lo"]),
        hi: num(interval["hi"]),
      },
      selected: p["selected"] === true,
      ...(a["untestable"] !== undefined ? { untestable: String(a["untestable"]) } : {}),
    };
  });
  const screened = firstOf(events, "signals.selected")?.payload;
  const level = typeof screened?.["alpha"] === "number" ? screened["alpha"] : alpha;
  const testable = tested.filter((t) => t.untestable === undefined);
  const m = typeof screened?.["tried"] === "number" ? screened["tried"] : testable.length;
  const order = [...testable].sort((a, b) => b.e - a.e || a.p - b.p || (a.signal < b.signal ? -1 : 1));
  const ranked: SignalRow[] = order.map((t, i) => ({ ...t, rank: i + 1, ebhBar: m / (level * (i + 1)) }));
  let rejections = 0;
  ranked.forEach((r) => {
    if (r.e >= r.ebhBar) rejections = r.rank;
  });
  const rest: SignalRow[] = tested
    .filter((t) => t.untestable !== undefined)
    .map((t) => ({ ...t, rank: Number.NaN, ebhBar: Number.NaN }));
  const split = firstOf(events, "split.made")?.payload;
  const explore = (split?.["explore"] ?? {}) as Payload;
  return {
    rows: [...ranked, ...rest],
    ...(screened ? { tried: m } : {}),
    alpha: level,
    ...(screened?.["procedure"] !== undefined ? { procedure: String(screened["procedure"]) } : {}),
    untestable: ((screened?.["untestable"] ?? []) as Payload[]).map((u) => ({
      name: String(u["name"]),
      reason: String(u["reason"]),
    })),
    selected: ((screened?.["selected"] ?? []) as unknown[]).map(String),
    ebhRejections: rejections,
    ...(split
      ? {
          split: {
            explore: num(explore["n"]),
            failures: num(explore["failures"]),
            sealed: num((split["sealed"] as Payload | undefined)?.["n"]),
          },
        }
      : {}),
  };
}

/** One hypothesis M3 stated (and M4 decided, once it has). */
export interface HypothesisCard {
  readonly id: string;
  readonly signal: string;
  readonly mechanism: string;
  readonly statement: string;
  readonly direction: string;
  readonly effect: {
    readonly name: string;
    readonly value: number;
    readonly nullValue: number;
    readonly lo: number;
    readonly hi: number;
  };
  readonly exploreN: number;
  readonly exploreE: number;
  readonly refutation: string;
  readonly author: string;
  /** Signals found to be the same measurement, merged into this one. */
  readonly merged: readonly { readonly signal: string; readonly relation: string }[];
}

export interface DiagnoseView {
  readonly cards: readonly HypothesisCard[];
  /** True once the hypotheses are frozen (before the sealed split is read). */
  readonly frozen: boolean;
}

export function diagnoseView(events: readonly RunEvent[]): DiagnoseView {
  const cards = byType(events, "hypothesis.stated").map((e) => {
    const h = e.payload;
    const effect = (h["exploreEffect"] ?? {}) as Payload;
    const interval = (effect["interval"] ?? {}) as Payload;
    return {
      id: String(h["id"]),
      signal: String(h["signal"]),
      mechanism: String(h["mechanism"] ?? ""),
      statement: String(h["statement"] ?? ""),
      direction: String(h["directionText"] ?? ""),
      effect: {
        name: String(effect["name"] ?? ""),
        value: num(effect["value"]),
        nullValue: num(effect["nullValue"]),
        lo: num(effect["lo"] ?? interval["lo"]),
        hi: num(effect["hi"] ?? interval["hi"]),
      },
      exploreN: num(h["exploreN"]),
      exploreE: num(h["exploreE"]),
      refutation: String(h["refutation"] ?? ""),
      author: String(h["author"] ?? "rules"),
      merged: ((h["merged"] ?? []) as Payload[]).map((m) => ({
        signal: String(m["signal"]),
        relation: String(m["relation"] ?? ""),
      })),
    };
  });
  return { cards, frozen: events.some((e) => e.type === "hypotheses.frozen") };
}

/** One verdict of M4 (shown only once decided: before, M4 shows counts alone). */
export interface VerdictRow {
  readonly id: string;
  readonly verdict: "SUPPORTED" | "REFUTED" | "INCONCLUSIVE";
  readonly effect: { readonly name: string; readonly value: number; readonly lo: number; readonly hi: number };
  readonly p: number;
  readonly e: number;
  readonly gamma: number;
  readonly reason: string;
}

/**
 * M4 as counts until the verdicts: how many sealed cases (and clusters) wait,
 * whether the split is still unread, how many hypotheses are to be decided and
 * how many are; never a sealed case, label or signal value.
 */
export interface VerifyView {
  readonly sealed?: number;
  readonly clusters?: number;
  /** Opened (read) by M4, after the hypotheses froze; the event number it was frozen at. */
  readonly opened: boolean;
  readonly frozenAt?: number;
  readonly toDecide: number;
  readonly decided: readonly VerdictRow[];
}

export function verifyView(events: readonly RunEvent[]): VerifyView {
  const split = firstOf(events, "split.made")?.payload;
  const opened = events.find((e) => e.type === "sealed.opened" && e.stage === "M4");
  const frozen = firstOf(events, "hypotheses.frozen")?.payload;
  const decided = byType(events, "hypothesis.decided").map((e) => {
    const d = e.payload;
    const a = (d["association"] ?? {}) as Payload;
    const effect = (a["effect"] ?? {}) as Payload;
    const interval = (effect["interval"] ?? {}) as Payload;
    return {
      id: String(d["id"]),
      verdict: String(d["verdict"]) as VerdictRow["verdict"],
      effect: {
        name: String(effect["name"] ?? ""),
        value: num(effect["value"]),
        lo: num(interval["lo"]),
        hi: num(interval["hi"]),
      },
      p: num(a["p"]),
      e: num(a["e"]),
      gamma: num(d["gamma"]),
      reason: String(d["reason"] ?? ""),
    };
  });
  const sealed = (split?.["sealed"] ?? {}) as Payload;
  return {
    ...(split ? { sealed: num(sealed["n"]) } : {}),
    ...(typeof split?.["clusters"] === "number" ? { clusters: split["clusters"] } : {}),
    opened: !!opened,
    ...(opened ? { frozenAt: num(opened.payload["frozenAt"]) } : {}),
    toDecide: frozen ? num(frozen["count"]) : byType(events, "hypothesis.stated").length,
    decided,
  };
}

/** One rung tried in M5 (the mechanism test counts as one), signed as its fixed − broken says. */
export interface RungRow {
  readonly tier: string;
  readonly candidate: string;
  readonly n: number;
  readonly fixed: number;
  readonly broken: number;
  /** (fixed − broken) / n: positive helps, negative harms. */
  readonly net: number;
  readonly p: number;
  readonly e: number;
  readonly gamma: number;
  readonly validated: boolean;
  /** The yes-bias control, on yes/no tasks. */
  readonly control?: { readonly fixed: number; readonly broken: number; readonly beaten: boolean };
  readonly mechanism?: boolean;
}

export interface RepairView {
  readonly rungs: readonly RungRow[];
  readonly outcome?: { readonly fixedBy: string | null; readonly recommendation: string };
  /** `note`: how the mechanism test and the ladder split α (the M5 budget), when the run says. */
  readonly budget?: { readonly tests: number; readonly gamma: number; readonly note?: string };
  readonly cases?: string;
}

export function repairView(events: readonly RunEvent[]): RepairView {
  const rung = (p: Payload, mechanism: boolean): RungRow => {
    const n = num(p["n"]);
    const fixed = num(p["fixed"]);
    const broken = num(p["broken"]);
    const control = p["control"] as Payload | undefined;
    return {
      tier: mechanism ? "mechanism" : String(p["tier"]),
      candidate: mechanism ? String(p["description"] ?? p["hypothesis"]) : String(p["candidate"]),
      n,
      fixed,
      broken,
      net: n > 0 ? (fixed - broken) / n : Number.NaN,
      p: num(p["p"]),
      e: num(p["e"]),
      gamma: num(p["gamma"]),
      validated: mechanism ? p["causal"] === true : p["validated"] === true,
      ...(control
        ? {
            control: {
              fixed: num(control["fixed"]),
              broken: num(control["broken"]),
              beaten: control["beaten"] === true,
            },
          }
        : {}),
      ...(mechanism ? { mechanism: true } : {}),
    };
  };
  const rungs = [
    ...byType(events, "intervention.tested").map((e) => rung(e.payload, true)),
    ...byType(events, "repair.tested").map((e) => rung(e.payload, false)),
  ];
  const done = firstOf(events, "repairs.finished")?.payload;
  const budget = done?.["budget"] as Payload | undefined;
  return {
    rungs,
    ...(done
      ? {
          outcome: {
            fixedBy: typeof done["fixedBy"] === "string" ? done["fixedBy"] : null,
            recommendation: String(done["recommendation"] ?? ""),
          },
        }
      : {}),
    ...(budget
      ? {
          budget: {
            tests: num(budget["tests"]),
            gamma: num(budget["gamma"]),
            ...(typeof budget["note"] === "string" ? { note: budget["note"] } : {}),
          },
        }
      : {}),
    ...(done?.["cases"] !== undefined ? { cases: String(done["cases"]) } : {}),
  };
}

/** The verdicts as the run logged them at its end (what the CLI's run.finished says). */
export function finalVerdicts(events: readonly RunEvent[]): { id: string; verdict: string }[] | undefined {
  const finished = firstOf(events, "run.finished")?.payload;
  if (!finished) return undefined;
  return ((finished["verdicts"] ?? []) as Payload[]).map((v) => ({
    id: String(v["id"]),
    verdict: String(v["verdict"]),
  }));
}
