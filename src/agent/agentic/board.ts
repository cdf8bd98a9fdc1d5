/**
 * The evidence board: what the judge sees each turn — a compact, structured
 * summary of what is known, which tools it may call now, what is left of its
 * turns and budget, and what the host refused lately. Exploration numbers
 * only, until test_hypothesis has decided on the sealed split.
 */
import type { AgenticState, TurnRecord } from "./host.ts";
import type { ToolName } from "./tools.ts";

export interface Board {
  readonly question: string;
  readonly turn: number;
  readonly turnsLeft: number;
  readonly modelCalls: { readonly used: number; readonly budget: number | null };
  /** Tools the host would accept now (preconditions met, under their caps). */
  readonly available: readonly ToolName[];
  readonly calls: Readonly<Partial<Record<ToolName, number>>>;
  readonly probe?: {
    readonly cases: number;
    readonly failures: number;
    readonly explore: { readonly n: number; readonly failures: number };
    readonly sealed: { readonly n: number; readonly opened: boolean };
    readonly signals: number;
  };
  /** explore_data: the signals with the largest gap between failures and passes (exploration). */
  readonly data?: readonly {
    readonly signal: string;
    readonly kind: string;
    readonly failMean: number | null;
    readonly passMean: number | null;
    readonly missing: number;
  }[];
  /** run_stats: the screen's result, and the strongest signals tested (exploration). */
  readonly stats?: {
    readonly tested: number;
    readonly selected: readonly string[];
    readonly top: readonly {
      readonly signal: string;
      readonly p: number;
      readonly effect: string;
      readonly direction: number;
      readonly selected: boolean;
    }[];
  };
  readonly modes?: {
    readonly k: number;
    readonly modes: readonly { readonly id: string; readonly size: number; readonly defining: readonly string[] }[];
  };
  readonly analyses: readonly {
    readonly id: string;
    readonly ok: boolean;
    readonly notes: readonly string[];
    readonly suggestions: readonly { readonly signal: string; readonly direction: number; readonly why: string }[];
    readonly error?: string;
  }[];
  readonly probes?: { readonly calls: number; readonly failures: number; readonly lift: number };
  readonly hypotheses?: readonly {
    readonly id: string;
    readonly signal: string;
    readonly direction: string;
    readonly mechanism: string;
  }[];
  readonly verdicts?: readonly { readonly id: string; readonly verdict: string; readonly reason: string }[];
  readonly surgery?: { readonly hypothesis: string; readonly causal: boolean; readonly p: number };
  readonly fix?: { readonly tried: number; readonly validated: number; readonly best?: string };
  /** The last refusals, so the judge can mend its next call. */
  readonly refused: readonly { readonly turn: number; readonly tool: string | null; readonly reason: string }[];
}

function round(x: number | null): number | null {
  return x === null || !Number.isFinite(x) ? null : Number(x.toPrecision(4));
}

/**
 * The board for this turn.
 * @example buildBoard({ analyses: [], modelCalls: 0 }, { question: "q", turn: 1, maxTurns: 20, budget: Infinity, calls: new Map(), caps, available: ["run_probe", "stop"], turns: [] }).available // ["run_probe", "stop"]
 */
export function buildBoard(
  state: AgenticState,
  ctx: {
    readonly question: string;
    readonly turn: number;
    readonly maxTurns: number;
    readonly budget: number;
    readonly calls: ReadonlyMap<ToolName, number>;
    readonly caps: Readonly<Record<ToolName, number>>;
    readonly available: readonly ToolName[];
    readonly turns: readonly TurnRecord[];
  },
): Board {
  const ex = state.explore;
  return {
    question: ctx.question,
    turn: ctx.turn,
    turnsLeft: ctx.maxTurns - ctx.turn + 1,
    modelCalls: { used: state.modelCalls, budget: Number.isFinite(ctx.budget) ? ctx.budget : null },
    available: ctx.available,
    calls: Object.fromEntries(ctx.calls),
    ...(state.table && ex && state.sealed
      ? {
          probe: {
            cases: state.table.ids.length,
            failures: state.table.failed.filter(Boolean).length,
            explore: { n: ex.ids.length, failures: ex.failed.filter(Boolean).length },
            sealed: { n: state.sealed.n, opened: state.sealed.opened },
            signals: state.table.columns.size,
          },
        }
      : {}),
    ...(state.summary
      ? {
          data: [...state.summary]
            .sort(
              (a, b) =>
                Math.abs((b.failMean ?? 0) - (b.passMean ?? 0)) / (Math.abs(b.passMean ?? 0) + 1e-9) -
                Math.abs((a.failMean ?? 0) - (a.passMean ?? 0)) / (Math.abs(a.passMean ?? 0) + 1e-9),
            )
            .slice(0, 12)
            .map((s) => ({ ...s, failMean: round(s.failMean), passMean: round(s.passMean) })),
        }
      : {}),
    ...(state.findings
      ? {
          stats: {
            tested: state.findings.length,
            selected: state.findings.filter((f) => f.selected).map((f) => f.signal),
            top: [...state.findings]
              .filter((f) => !f.association.untestable)
              .sort((a, b) => a.association.p - b.association.p)
              .slice(0, 10)
              .map((f) => ({
                signal: f.signal,
                p: round(f.association.p)!,
                effect: `${f.association.effect.name} ${round(f.association.effect.value)}`,
                direction: f.association.observedDirection,
                selected: f.selected,
              })),
          },
        }
      : {}),
    ...(state.modes
      ? {
          modes: {
            k: state.modes.k,
            modes: state.modes.modes.map((m) => ({
              id: m.id,
              size: m.size,
              defining: m.defining.map((d) => d.signal),
            })),
          },
        }
      : {}),
    analyses: state.analyses.map((a) =>
      a.outcome.ok
        ? {
            id: a.id,
            ok: true,
            notes: a.outcome.output.notes.slice(0, 5),
            suggestions: a.outcome.output.suggestions,
          }
        : { id: a.id, ok: false, notes: [], suggestions: [], error: a.outcome.error },
    ),
    ...(state.probes
      ? { probes: { calls: state.probes.calls, failures: state.probes.failures, lift: state.probes.lift } }
      : {}),
    ...(state.hypotheses
      ? {
          hypotheses: state.hypotheses.map((h) => ({
            id: h.id,
            signal: h.signal,
            direction: h.directionText,
            mechanism: h.mechanism,
          })),
        }
      : {}),
    ...(state.verified
      ? { verdicts: state.verified.map((v) => ({ id: v.id, verdict: v.verdict, reason: v.reason })) }
      : {}),
    ...(state.surgery
      ? { surgery: { hypothesis: state.surgery.hypothesis, causal: state.surgery.causal, p: round(state.surgery.p)! } }
      : {}),
    ...(state.fix
      ? {
          fix: {
            tried: state.fix.tried,
            validated: state.fix.validated,
            ...(state.fix.best ? { best: state.fix.best } : {}),
          },
        }
      : {}),
    refused: ctx.turns
      .filter((t) => t.status === "refused")
      .slice(-3)
      .map((t) => ({ turn: t.turn, tool: t.tool, reason: t.reason ?? "" })),
  };
}
