/**
 * The agentic loop's host. Each turn it shows the judge the evidence board,
 * takes one tool call back, and decides — itself, never the judge — whether
 * the call may run: a known tool with well-formed arguments, under its call
 * cap, its preconditions met (statistics before hypotheses, hypotheses frozen
 * before the sealed split opens, the sealed split opened once), within the
 * model-call budget; and `stop` with success only when a hypothesis was
 * actually tested on the sealed split and came out SUPPORTED and
 * protocol-consistent. A refused call is logged with its reason and the turn
 * counts. Every turn is an `agentic.turn` event; the report shows the path.
 */
import type { EventLog } from "../events.ts";
import { explore, type ScreenRule, type SignalFinding } from "../explore.ts";
import { diagnose, type Hypothesis } from "../diagnose.ts";
import type { Judge } from "../judge.ts";
import { compareLayers } from "../layers.ts";
import { splitTable, timed } from "../loop.ts";
import { failureModes, type FailureModes } from "../modes/failure-modes.ts";
import type { ExperimentProtocol } from "../protocol.ts";
import { signalValues } from "../same-measurement.ts";
import { SealedSplit } from "../sealed.ts";
import { selectRows, typeSignals, type CaseTable, type TypedSignal } from "../signals.ts";
import { verify, type VerifiedHypothesis } from "../verify.ts";
import { runAnalysis, type AnalysisRun } from "../sandbox/analysis.ts";
import type { SandboxRunner } from "../sandbox/protocol.ts";
import { buildBoard, type Board } from "./board.ts";
import { DEFAULT_CAPS, TOOLS, TOOL_HELP, TOOL_STAGE, parseToolCall, type ToolCall, type ToolName } from "./tools.ts";

/** What the host knows so far: the pipeline's state, filled in by the tools that ran. */
export interface AgenticState {
  table?: CaseTable;
  explore?: CaseTable;
  sealed?: SealedSplit;
  typed?: TypedSignal[];
  findings?: SignalFinding[];
  summary?: SignalSummary[];
  modes?: FailureModes;
  readonly analyses: AnalysisRun[];
  probes?: { readonly calls: number; readonly failures: number; readonly lift: number; readonly note: string };
  hypotheses?: Hypothesis[];
  /** Which extra hypothesis signals came from where (an analysis id, "modes", "judge"). */
  seeded?: { readonly signal: string; readonly by: string }[];
  verified?: VerifiedHypothesis[];
  surgery?: { readonly hypothesis: string; readonly causal: boolean; readonly p: number; readonly note: string };
  fix?: { readonly tried: number; readonly validated: number; readonly best?: string; readonly note: string };
  modelCalls: number;
}

/** One signal's exploration summary (explore_data). */
export interface SignalSummary {
  readonly signal: string;
  readonly kind: TypedSignal["kind"];
  readonly failMean: number | null;
  readonly passMean: number | null;
  readonly missing: number;
}

/** A tool's answer: what goes on the board's turn line, and the model calls it spent. */
export interface ToolOutcome {
  readonly result: string;
  readonly modelCalls?: number;
  /** Structured facts for the log and the report (the failure modes found, the hypotheses an analysis seeded). */
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** The model-facing tools; absent ones are unavailable (an eval log without a model has no M1 or M5). */
export interface AgenticPipeline {
  /** M1: labels and signals for every case. */
  readonly probe: {
    readonly cost: number;
    run(log: EventLog): Promise<{ table: CaseTable; modelCalls: number; result: string }>;
  };
  readonly surgery?: {
    cost(state: AgenticState): number;
    /** Why it cannot run on this hypothesis (no attention signal, no attention_write), or undefined. */
    refuse(state: AgenticState, hypothesis: Hypothesis): string | undefined;
    run(
      state: AgenticState,
      hypothesis: Hypothesis,
      log: EventLog,
    ): Promise<ToolOutcome & { causal: boolean; p: number }>;
  };
  readonly fix?: {
    cost(state: AgenticState): number;
    run(state: AgenticState, log: EventLog): Promise<ToolOutcome & { tried: number; validated: number; best?: string }>;
  };
  readonly searchProbes?: {
    readonly defaultBudget: number;
    refuse?(state: AgenticState): string | undefined;
    run(budget: number, state: AgenticState, log: EventLog): Promise<ToolOutcome & { failures: number; lift: number }>;
  };
}

/** Who picks the tools: the rules (default), an endpoint, a local model, or a script in tests. */
export interface AgenticJudge {
  /** e.g. "rules", "openai:http://localhost:8000/v1#qwen", "model:tiny-vlm". */
  readonly id: string;
  /** The prompt (board included) is for text judges; the rule policy reads the board itself. */
  next(prompt: string, board: Board, options?: { readonly signal?: AbortSignal }): Promise<string>;
}

export interface AgenticOptions {
  readonly protocol: ExperimentProtocol;
  readonly seed?: number;
  readonly alpha?: number;
  readonly holdout?: number;
  readonly screen?: Partial<ScreenRule>;
  /** Turns the judge gets, refused ones included (default 20). */
  readonly maxTurns?: number;
  /** Calls to the model under investigation the tools may spend (default: unbounded). */
  readonly modelCallBudget?: number;
  readonly caps?: Partial<Record<ToolName, number>>;
  /** The sandbox that runs analyses; without one run_analysis is unavailable. */
  readonly sandbox?: SandboxRunner;
  /** A judge to word mechanisms and decide protocol consistency (M3/M4), as in the fixed loop. */
  readonly wordingJudge?: Judge;
  readonly resamples?: { readonly explore?: number; readonly sealed?: number };
  readonly signal?: AbortSignal;
  readonly onTurn?: (turn: TurnRecord) => void;
}

/** One turn as logged. */
export interface TurnRecord {
  readonly turn: number;
  readonly tool: ToolName | null;
  readonly args: Readonly<Record<string, unknown>>;
  readonly why: string;
  readonly status: "ran" | "refused";
  readonly reason?: string;
  readonly result?: string;
  readonly modelCalls: number;
  readonly detail?: Readonly<Record<string, unknown>>;
  /** The raw reply, when it could not be read as a tool call. */
  readonly reply?: string;
}

export interface AgenticResult {
  readonly state: AgenticState;
  readonly turns: readonly TurnRecord[];
  readonly stop: {
    readonly by: "judge" | "host";
    readonly success: boolean;
    readonly hypothesis?: string;
    readonly summary: string;
  };
}

/** The prompt a text judge is sent: the rules, the tools it may call now, the board, and the reply shape. */
export function judgePrompt(board: Board, help: Readonly<Record<ToolName, string>>): string {
  return [
    "You run a diagnosis of why a model fails, one tool call per turn. The host enforces the rules; a call that breaks one is refused and the turn is spent.",
    "Rules: hypotheses are frozen once (propose_hypotheses) before the sealed split is read; test_hypothesis opens the sealed split once; stop with success only for a hypothesis that test_hypothesis found SUPPORTED.",
    "Tools you may call now:",
    ...board.available.map((t) => `- ${t}: ${help[t]}`),
    "Evidence board (JSON):",
    JSON.stringify(board),
    'Reply with ONE JSON object and nothing else: {"tool": "<name>", "args": {...}, "why": "<one sentence>"}',
  ].join("\n");
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function summarise(explore: CaseTable, typed: readonly TypedSignal[]): SignalSummary[] {
  return typed.map((s) => {
    const sum = { fail: 0, pass: 0 };
    const n = { fail: 0, pass: 0 };
    let missing = 0;
    s.values.forEach((v, i) => {
      if (!Number.isFinite(v)) {
        missing++;
        return;
      }
      const side = explore.failed[i] ? "fail" : "pass";
      sum[side] += v;
      n[side]++;
    });
    const fn = n.fail;
    const pn = n.pass;
    const fs = sum.fail;
    const ps = sum.pass;
    return {
      signal: s.name,
      kind: s.kind,
      failMean: fn ? fs / fn : null,
      passMean: pn ? ps / pn : null,
      missing,
    };
  });
}

/**
 * Runs the judge-decided loop until the judge stops (and the stop gate lets it) or the turns run out.
 *
 * @example const { stop, turns } = await runAgentic(pipeline, rulePolicy(), log, { protocol: { question: "What predicts failure?" }, sandbox })
 */
export async function runAgentic(
  pipeline: AgenticPipeline,
  judge: AgenticJudge,
  log: EventLog,
  options: AgenticOptions,
): Promise<AgenticResult> {
  const seed = options.seed ?? 1;
  const alpha = options.alpha ?? 0.05;
  const fraction = options.holdout ?? 0.4;
  if (!(fraction > 0 && fraction < 1))
    throw new Error(`holdout ${fraction} must lie strictly between 0 and 1 (e.g. 0.4 seals 40% of the cases)`);
  const maxTurns = options.maxTurns ?? 20;
  if (!Number.isInteger(maxTurns) || maxTurns < 1)
    throw new RangeError(`agentic maxTurns must be a whole number ≥ 1, got ${maxTurns}`);
  const budget = options.modelCallBudget ?? Infinity;
  const caps: Record<ToolName, number> = { ...DEFAULT_CAPS, ...options.caps };
  const state: AgenticState = { analyses: [], modelCalls: 0 };
  const calls = new Map<ToolName, number>();
  const turns: TurnRecord[] = [];

  /** Why `tool` may not run now (a precondition or its cap), or undefined. */
  const refusal = (tool: ToolName): string | undefined => {
    const used = calls.get(tool) ?? 0;
    if (used >= caps[tool]) return `${tool} has used its cap of ${caps[tool]} call${caps[tool] === 1 ? "" : "s"}`;
    const needProbe = "run_probe has not run: there are no labelled cases or signals yet";
    switch (tool) {
      case "run_probe":
        return undefined;
      case "explore_data":
      case "run_stats":
      case "cluster_failures":
        return state.explore ? undefined : needProbe;
      case "run_analysis":
        if (!options.sandbox) return "no analysis sandbox is configured for this run";
        return state.explore ? undefined : needProbe;
      case "search_probes":
        if (!pipeline.searchProbes) return "probe search is not available here (it needs the model and scene cases)";
        return state.explore ? pipeline.searchProbes.refuse?.(state) : needProbe;
      case "propose_hypotheses":
        return state.findings ? undefined : "run_stats has not run: hypotheses come from the tested signals";
      case "test_hypothesis":
        if (!state.hypotheses) return "the hypotheses are not frozen yet (propose_hypotheses first)";
        return state.sealed?.opened ? "the sealed split was already opened; it is read once" : undefined;
      case "run_surgery":
        if (!pipeline.surgery) return "no model to intervene on in this run";
        return state.verified ? undefined : "no hypothesis has been tested on the sealed split yet (test_hypothesis)";
      case "run_fix":
        if (!pipeline.fix) return "no model to repair in this run (or the repair ceiling is none)";
        return state.verified ? undefined : "repairs come after the hypotheses were decided (test_hypothesis)";
      case "stop":
        return undefined;
    }
  };
  const available = (): ToolName[] => TOOLS.filter((t) => refusal(t) === undefined);
  const costOf = (call: ToolCall): number => {
    switch (call.tool) {
      case "run_probe":
        return pipeline.probe.cost;
      case "search_probes":
        return (call.args.budget as number | undefined) ?? pipeline.searchProbes?.defaultBudget ?? 0;
      case "run_surgery":
        return pipeline.surgery?.cost(state) ?? 0;
      case "run_fix":
        return pipeline.fix?.cost(state) ?? 0;
      default:
        return 0;
    }
  };

  /** Runs an accepted call; throws a refusal (RefusedCall) for what only the arguments reveal. */
  const execute = async (call: ToolCall): Promise<ToolOutcome> => {
    switch (call.tool) {
      case "run_probe": {
        const out = await timed(log, "M1", () => pipeline.probe.run(log));
        state.table = out.table;
        const split = splitTable(out.table, fraction, out.table.clusters ? "cluster" : "id", seed);
        state.explore = selectRows(out.table, split.explore);
        state.sealed = new SealedSplit(out.table, split.sealed, log);
        const failures = state.explore.failed.filter(Boolean).length;
        log.append("setup", "split.made", {
          fraction,
          by: out.table.clusters ? "cluster" : "id",
          salt: split.salt,
          explore: { n: state.explore.ids.length, failures },
          sealed: { n: state.sealed.n },
          clusters: out.table.clusters ? new Set(out.table.clusters).size : undefined,
        });
        return {
          result: `${out.result}; split: ${state.explore.ids.length} exploration cases (${failures} failing), ${state.sealed.n} sealed`,
          modelCalls: out.modelCalls,
        };
      }
      case "explore_data": {
        const typed = typeSignals(state.explore!);
        state.summary = summarise(state.explore!, typed.signals);
        return {
          result: `${typed.signals.length} testable signals on ${state.explore!.ids.length} exploration cases; ${typed.untestable.length} untestable`,
        };
      }
      case "run_stats": {
        const ex = state.explore!;
        const findings = await timed(log, "M2", () => {
          const typed = typeSignals(ex);
          state.typed = typed.signals;
          const fails = ex.failed.filter(Boolean).length;
          if (fails === 0 || fails === ex.ids.length) {
            const why =
              fails === 0
                ? "no exploration case fails: there is no failure to explain"
                : "every exploration case fails: nothing distinguishes failures from passes";
            log.append("M2", "problem", { what: "label", why });
            return explore(
              ex,
              [],
              [...typed.untestable, ...typed.signals.map((s) => ({ name: s.name, reason: why }))],
              log,
              {
                alpha,
                seed,
                resamples: options.resamples?.explore,
                ...(options.screen ? { screen: options.screen } : {}),
              },
            );
          }
          const f = explore(ex, typed.signals, typed.untestable, log, {
            alpha,
            seed,
            resamples: options.resamples?.explore,
            ...(options.screen ? { screen: options.screen } : {}),
          });
          compareLayers(typed.signals, ex.failed, log);
          return f;
        });
        state.findings = findings;
        const selected = findings.filter((f) => f.selected);
        return {
          result: `${findings.length} signals tested; ${selected.length} passed the screen${selected.length ? `: ${selected.map((f) => f.signal).join(", ")}` : ""}`,
        };
      }
      case "cluster_failures": {
        const typed = state.typed ?? typeSignals(state.explore!).signals;
        const modes = failureModes(state.explore!, typed, { seed });
        state.modes = modes;
        return {
          detail: {
            k: modes.k,
            why: modes.why,
            modes: modes.modes.map((m) => ({ id: m.id, size: m.size, defining: m.defining.map((d) => d.signal) })),
          },
          result: `${modes.k} failure mode${modes.k === 1 ? "" : "s"} among ${modes.failing} exploration failures: ${modes.modes
            .map((m) => `${m.id} (${m.size}; ${m.defining.map((d) => d.signal).join(", ") || "no defining signal"})`)
            .join("; ")}`,
        };
      }
      case "search_probes": {
        const b = costOf(call);
        if (b < 10) throw new RefusedCall(`search_probes needs a budget of at least 10 model calls, got ${b}`);
        const out = await pipeline.searchProbes!.run(b, state, log);
        state.probes = { calls: out.modelCalls ?? b, failures: out.failures, lift: out.lift, note: out.result };
        return out;
      }
      case "run_analysis": {
        const id = `A${state.analyses.length + 1}`;
        const run = await runAnalysis(options.sandbox!, call.args.code as string, state.explore!, log, {
          id,
          author: judge.id,
          purpose: (call.args.purpose as string | undefined) ?? call.why,
          ...(options.signal ? { signal: options.signal } : {}),
        });
        state.analyses.push(run);
        const o = run.outcome;
        return {
          result: o.ok
            ? `${id}: ${plural(o.output.tables.length, "table")}, ${plural(o.output.figures.length, "figure")}, ${plural(o.output.suggestions.length, "suggestion")}${o.output.suggestions.length ? ` (${o.output.suggestions.map((s) => s.signal).join(", ")})` : ""}${run.setAside.length ? `; set aside: ${run.setAside.map((s) => s.why).join("; ")}` : ""}`
            : `${id} failed (${o.reason}): ${o.error}`,
        };
      }
      case "propose_hypotheses": {
        const named = (call.args.signals as string[] | undefined) ?? [];
        const findings = state.findings!;
        const matched = named.map((name) => ({
          name,
          finding:
            findings.find((f) => f.signal === name) ?? findings.find((f) => f.column === name && f.kind !== "binary"),
        }));
        const unknown = matched.filter((m) => !m.finding).map((m) => m.name);
        if (unknown.length)
          throw new RefusedCall(
            `propose_hypotheses names ${unknown.map((u) => `'${u}'`).join(", ")}, which run_stats did not test; tested signals are ${findings
              .slice(0, 12)
              .map((f) => f.signal)
              .join(", ")}${findings.length > 12 ? ", …" : ""}`,
          );
        const extra = new Set(matched.map((m) => m.finding!.signal));
        const bySuggestion = new Map<string, string>();
        for (const a of state.analyses)
          if (a.outcome.ok)
            for (const s of a.outcome.output.suggestions)
              if (!bySuggestion.has(s.signal)) bySuggestion.set(s.signal, a.id);
        state.seeded = matched
          .filter((m) => !m.finding!.selected)
          .map((m) => ({
            signal: m.finding!.signal,
            by: bySuggestion.get(m.name) ?? bySuggestion.get(m.finding!.signal) ?? `named by ${judge.id}`,
          }));
        const ex = state.explore!;
        state.hypotheses = await timed(log, "M3", () =>
          diagnose(
            findings.map((f) => (extra.has(f.signal) && !f.selected ? { ...f, selected: true } : f)),
            log,
            { ...(options.wordingJudge ? { judge: options.wordingJudge } : {}), values: signalValues(ex) },
          ),
        );
        return {
          detail: {
            hypotheses: state.hypotheses.map((h) => ({ id: h.id, signal: h.signal })),
            seeded: state.seeded,
          },
          result: `${plural(state.hypotheses.length, "hypothesis", "hypotheses")} frozen${state.hypotheses.length ? `: ${state.hypotheses.map((h) => `${h.id} ${h.signal} (${h.directionText})`).join("; ")}` : ""}${state.seeded.length ? `; seeded beyond the screen: ${state.seeded.map((s) => `${s.signal} by ${s.by}`).join(", ")}` : ""}`,
        };
      }
      case "test_hypothesis": {
        const hs = state.hypotheses!;
        state.verified = await timed(log, "M4", async () => {
          if (hs.length === 0) {
            log.append("M4", "problem", {
              what: "hypotheses",
              why: "no hypothesis was frozen, so nothing was decided on the sealed split (it stays unread)",
            });
            return [];
          }
          return verify(hs, state.sealed!.open("M4"), log, {
            alpha,
            seed,
            protocol: options.protocol,
            ...(options.wordingJudge ? { judge: options.wordingJudge } : {}),
            resamples: options.resamples?.sealed,
          });
        });
        return {
          result: state.verified.length
            ? state.verified.map((v) => `${v.id} ${v.verdict}`).join("; ")
            : "nothing to decide: the sealed split stays unread",
        };
      }
      case "run_surgery": {
        const id = call.args.hypothesis as string;
        const h = state.hypotheses?.find((x) => x.id === id);
        const v = state.verified?.find((x) => x.id === id);
        if (!h || !v)
          throw new RefusedCall(
            `run_surgery names '${id}', which is not a decided hypothesis (decided: ${state.verified!.map((x) => x.id).join(", ") || "none"})`,
          );
        if (v.verdict !== "SUPPORTED")
          throw new RefusedCall(`run_surgery needs a SUPPORTED hypothesis; ${id} is ${v.verdict}`);
        const why = pipeline.surgery!.refuse(state, h);
        if (why) throw new RefusedCall(why);
        const out = await pipeline.surgery!.run(state, h, log);
        state.surgery = { hypothesis: id, causal: out.causal, p: out.p, note: out.result };
        return out;
      }
      case "run_fix": {
        const out = await timed(log, "M5", () => pipeline.fix!.run(state, log));
        state.fix = {
          tried: out.tried,
          validated: out.validated,
          ...(out.best ? { best: out.best } : {}),
          note: out.result,
        };
        return out;
      }
      case "stop":
        throw new Error("stop is handled by the host");
    }
  };

  /** Why a stop with success is refused, or undefined when the gate lets it through. */
  const stopGate = (call: ToolCall): string | undefined => {
    if (call.args.success !== true) return undefined;
    const id = call.args.hypothesis as string | undefined;
    if (!state.verified)
      return "success needs a hypothesis tested on the sealed split, and test_hypothesis has not run";
    const supported = state.verified.filter((v) => v.verdict === "SUPPORTED").map((v) => v.id);
    if (!id)
      return `success must name the hypothesis it rests on (args.hypothesis)${supported.length ? `; SUPPORTED: ${supported.join(", ")}` : ""}`;
    const v = state.verified.find((x) => x.id === id);
    if (!v)
      return `'${id}' was not tested on the sealed split (tested: ${state.verified.map((x) => x.id).join(", ") || "none"})`;
    if (v.verdict !== "SUPPORTED") return `${id} is ${v.verdict} on the sealed split, not SUPPORTED: ${v.reason}`;
    if (!v.statisticalGate.passed || !v.protocolGate.consistent)
      return `${id} did not pass both gates (statistical: ${v.statisticalGate.passed}, protocol-consistent: ${v.protocolGate.consistent})`;
    return undefined;
  };

  log.append("setup", "agentic.started", {
    judge: judge.id,
    maxTurns,
    modelCallBudget: Number.isFinite(budget) ? budget : null,
    caps,
    sandbox: options.sandbox?.describe ?? null,
    tools: TOOLS.filter(
      (t) =>
        !(t === "run_analysis" && !options.sandbox) &&
        !(t === "search_probes" && !pipeline.searchProbes) &&
        !(t === "run_surgery" && !pipeline.surgery) &&
        !(t === "run_fix" && !pipeline.fix),
    ),
  });

  let stop: AgenticResult["stop"] | undefined;
  for (let turn = 1; turn <= maxTurns && !stop; turn++) {
    options.signal?.throwIfAborted();
    const board = buildBoard(state, {
      question: options.protocol.question,
      turn,
      maxTurns,
      budget,
      calls,
      caps,
      available: available(),
      turns,
    });
    // A judge that cannot answer (an endpoint's HTTP error, a prompt over a small model's context) spends its turn
    // like a malformed reply: the host refuses it with the reason and goes on; only a cancel ends the loop here.
    let reply: string | undefined;
    let unanswered: string | undefined;
    try {
      reply = await judge.next(judgePrompt(board, TOOL_HELP), board, options.signal ? { signal: options.signal } : {});
    } catch (error) {
      options.signal?.throwIfAborted();
      unanswered = `the judge could not answer: ${(error instanceof Error ? error.message : String(error)).slice(0, 500)}`;
    }
    const before = state.modelCalls;
    let record: TurnRecord;
    let call: ToolCall | undefined;
    if (reply === undefined)
      record = { turn, tool: null, args: {}, why: "", status: "refused", reason: unanswered!, modelCalls: 0 };
    else
      try {
        call = parseToolCall(reply);
      } catch (error) {
        record = {
          turn,
          tool: null,
          args: {},
          why: "",
          status: "refused",
          reason: `malformed reply: ${(error as Error).message}`,
          modelCalls: 0,
          reply: reply.slice(0, 2000),
        };
      }
    if (call) {
      const base = { turn, tool: call.tool, args: call.args, why: call.why };
      const blocked = refusal(call.tool);
      const cost = blocked ? 0 : costOf(call);
      const over =
        !blocked && state.modelCalls + cost > budget
          ? `${call.tool} would spend about ${cost} model calls; ${Math.max(0, budget - state.modelCalls)} of the budget of ${budget} are left`
          : undefined;
      const gate = call.tool === "stop" ? stopGate(call) : undefined;
      const reason = blocked ?? over ?? gate;
      if (reason) record = { ...base, status: "refused", reason, modelCalls: 0 };
      else if (call.tool === "stop") {
        calls.set("stop", 1);
        const summary = (call.args.summary as string | undefined) ?? call.why;
        stop = {
          by: "judge",
          success: call.args.success === true,
          ...(typeof call.args.hypothesis === "string" ? { hypothesis: call.args.hypothesis } : {}),
          summary,
        };
        record = {
          ...base,
          status: "ran",
          result: stop.success ? `success on ${stop.hypothesis}` : "stopped without a supported hypothesis",
          modelCalls: 0,
        };
      } else {
        try {
          const out = await execute(call);
          calls.set(call.tool, (calls.get(call.tool) ?? 0) + 1);
          state.modelCalls += out.modelCalls ?? 0;
          record = {
            ...base,
            status: "ran",
            result: out.result,
            modelCalls: state.modelCalls - before,
            ...(out.detail ? { detail: out.detail } : {}),
          };
        } catch (error) {
          if (!(error instanceof RefusedCall)) throw error;
          record = { ...base, status: "refused", reason: error.message, modelCalls: 0 };
        }
      }
    }
    turns.push(record!);
    log.append(call ? TOOL_STAGE[call.tool] : "setup", "agentic.turn", { ...record! });
    options.onTurn?.(record!);
  }
  if (!stop) {
    stop = {
      by: "host",
      success: false,
      summary: `the judge did not stop within ${maxTurns} turns; the host ended the run without a claim`,
    };
  }
  const supported = state.verified?.filter((v) => v.verdict === "SUPPORTED").map((v) => v.id) ?? [];
  log.append("report", "agentic.stopped", {
    ...stop,
    turns: turns.length,
    refused: turns.filter((t) => t.status === "refused").length,
    modelCalls: state.modelCalls,
    supported,
  });
  return { state, turns, stop };
}

/** A refusal that only the call's arguments reveal (an unknown hypothesis id, an untested signal). */
export class RefusedCall extends Error {
  override readonly name = "RefusedCall";
}
