/**
 * The agentic panel's data, from the run's events alone: who judged, each
 * turn (tool, reason, whether the host ran or refused it, and why), and how
 * the loop stopped. Undefined for a run of the fixed pipeline.
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

export interface AgenticView {
  readonly judge: string;
  readonly maxTurns: number;
  readonly sandbox: string | null;
  readonly turns: readonly AgenticTurnRow[];
  readonly refused: number;
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
        tool: typeof p.tool === "string" ? p.tool : "(unreadable reply)",
        why: typeof p.why === "string" ? p.why : "",
        status: p.status === "ran" ? ("ran" as const) : ("refused" as const),
        said: String((p.status === "ran" ? p.result : p.reason) ?? ""),
        modelCalls: Number(p.modelCalls ?? 0),
      };
    });
  const stopped = events.find((e) => e.type === "agentic.stopped")?.payload;
  return {
    judge: String(started.judge),
    maxTurns: Number(started.maxTurns),
    sandbox: typeof started.sandbox === "string" ? started.sandbox : null,
    turns,
    refused: turns.filter((t) => t.status === "refused").length,
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
