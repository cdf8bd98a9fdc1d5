/**
 * The agentic panel's data, from the run's events alone: who judged, each
 * turn (tool, reason, whether the host ran or refused it, and why), how the
 * loop stopped, and each analysis run in the sandbox with the figure specs
 * it returned (drawn by the panel; the specs stay unchecked data here).
 * Undefined for a run of the fixed pipeline.
 */
import type { RunEvent } from "../../../agent/events.ts";

export interface AgenticTurnRow {
  readonly turn: number;
  readonly tool: string;
  readonly why: string;
  readonly status: "ran" | "refused";
  /** What the tool found (ran) or why the host refused it. */
  readonly said: string;
  readonly modelCalls: number;
}

/** One analysis run in the sandbox, as the panel shows it. */
export interface AgenticAnalysisRow {
  readonly id: string;
  readonly purpose: string;
  readonly ok: boolean;
  /** "ran in 12 ms", or "thrown after 3 ms: x is not defined". */
  readonly outcome: string;
  readonly notes: readonly string[];
  /** The figure specs as the sandbox returned them (checked again where they are drawn). */
  readonly figures: readonly unknown[];
  readonly tables: number;
}

export interface AgenticView {
  readonly judge: string;
  readonly maxTurns: number;
  readonly sandbox: string | null;
  readonly turns: readonly AgenticTurnRow[];
  readonly refused: number;
  readonly analyses: readonly AgenticAnalysisRow[];
  readonly stop?: {
    readonly by: string;
    readonly success: boolean;
    readonly hypothesis?: string;
    readonly summary: string;
  };
}

/**
 * @example agenticView(events)?.turns[0] // { turn: 1, tool: "run_probe", status: "ran", said: "600 cases labelled and probed (…)", … }
 */
export function agenticView(events: readonly RunEvent[]): AgenticView | undefined {
  const started = events.find((e) => e.type === "agentic.started")?.payload;
  if (!started) return undefined;
  const turns = events
    .filter((e) => e.type === "agentic.turn")
    .map((e) => {
      const p = e.payload;
      return {
        turn: Number(p.turn),
        // A malformed reply is kept with its turn; a judge that could not answer left none.
        tool: typeof p.tool === "string" ? p.tool : typeof p.reply === "string" ? "(unreadable reply)" : "(no reply)",
        why: typeof p.why === "string" ? p.why : "",
        status: p.status === "ran" ? ("ran" as const) : ("refused" as const),
        said: String((p.status === "ran" ? p.result : p.reason) ?? ""),
        modelCalls: Number(p.modelCalls ?? 0),
      };
    });
  const analyses = events
    .filter((e) => e.type === "analysis.ran")
    .map((e): AgenticAnalysisRow => {
      const p = e.payload;
      const output = (p.output ?? {}) as { figures?: unknown; tables?: unknown; notes?: unknown };
      const ok = p.ok === true;
      return {
        id: String(p.id),
        purpose: typeof p.purpose === "string" ? p.purpose : "",
        ok,
        outcome: ok
          ? `ran in ${Number(p.ms)} ms`
          : `${String(p.reason ?? "failed")} after ${Number(p.ms)} ms${p.error ? `: ${String(p.error)}` : ""}`,
        notes: Array.isArray(output.notes) ? output.notes.map(String) : [],
        figures: Array.isArray(output.figures) ? output.figures : [],
        tables: Array.isArray(output.tables) ? output.tables.length : 0,
      };
    });
  const stopped = events.find((e) => e.type === "agentic.stopped")?.payload;
  return {
    judge: String(started.judge),
    maxTurns: Number(started.maxTurns),
    sandbox: typeof started.sandbox === "string" ? started.sandbox : null,
    turns,
    refused: turns.filter((t) => t.status === "refused").length,
    analyses,
    ...(stopped
      ? {
          stop: {
            by: String(stopped.by),
            success: stopped.success === true,
            ...(typeof stopped.hypothesis === "string" ? { hypothesis: stopped.hypothesis } : {}),
            summary: String(stopped.summary ?? ""),
          },
        }
      : {}),
  };
}
