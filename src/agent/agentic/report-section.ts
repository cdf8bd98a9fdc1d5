/**
 * The agentic loop and its analyses as the report shows them, folded from
 * the log alone: the judge, the host's rules, every turn (what was asked,
 * why, what the host said), how it stopped; and each analysis as it ran —
 * code, input fingerprint, runtime, output or error.
 */
import type { Report } from "../../report/schema.ts";
import type { RunEvent } from "../events.ts";

type Payload = Record<string, unknown>;

/**
 * The report's `agentic` part, or undefined when the run was not agentic.
 * @example agenticOf(log.events)?.turns.map((t) => t.tool) // ["run_probe", "run_stats", …, "stop"]
 */
export function agenticOf(events: readonly RunEvent[]): Report["agentic"] | undefined {
  const started = events.find((e) => e.type === "agentic.started")?.payload as Payload | undefined;
  if (!started) return undefined;
  const stopped = events.find((e) => e.type === "agentic.stopped")?.payload as Payload | undefined;
  return {
    judge: String(started.judge),
    maxTurns: Number(started.maxTurns),
    modelCallBudget: (started.modelCallBudget as number | null) ?? null,
    caps: started.caps as Record<string, number>,
    tools: (started.tools as unknown[]).map(String),
    sandbox: (started.sandbox as string | null) ?? null,
    turns: events
      .filter((e) => e.type === "agentic.turn")
      .map((e) => e.payload as unknown as NonNullable<Report["agentic"]>["turns"][number]),
    stop: stopped
      ? {
          by: stopped.by as "judge" | "host",
          success: Boolean(stopped.success),
          ...(typeof stopped.hypothesis === "string" ? { hypothesis: stopped.hypothesis } : {}),
          summary: String(stopped.summary ?? ""),
          turns: Number(stopped.turns),
          refused: Number(stopped.refused),
          modelCalls: Number(stopped.modelCalls ?? 0),
          supported: ((stopped.supported as unknown[]) ?? []).map(String),
        }
      : null,
  };
}

/**
 * The report's `analyses`: each `analysis.ran`, code and all.
 * @example analysesOf(log.events)[0].code // "const rows = [];\n…"
 */
export function analysesOf(events: readonly RunEvent[]): NonNullable<Report["analyses"]> {
  return events
    .filter((e) => e.type === "analysis.ran")
    .map((e) => {
      const p = e.payload;
      const input = p.input as { fingerprint: string; n: number };
      return {
        id: String(p.id),
        author: String(p.author),
        purpose: String(p.purpose ?? ""),
        code: String(p.code),
        fingerprint: input.fingerprint,
        n: input.n,
        runtime: String(p.runtime),
        ok: Boolean(p.ok),
        ms: Number(p.ms),
        ...(p.reason ? { reason: String(p.reason) } : {}),
        ...(p.error ? { error: String(p.error) } : {}),
        ...(p.output ? { output: p.output as NonNullable<NonNullable<Report["analyses"]>[number]["output"]> } : {}),
        ...(p.setAside ? { setAside: p.setAside as { signal: string; why: string }[] } : {}),
      };
    });
}
