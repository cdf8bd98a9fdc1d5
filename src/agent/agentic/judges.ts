/**
 * The judges that can drive the agentic loop. `rulePolicy` (the default) is
 * deterministic and reads the board: probe, statistics, failure modes, one
 * analysis of its own in the sandbox, hypotheses (the screen's plus what the
 * analysis suggested), the sealed test, then M5 and stop. `textJudge` turns
 * any text judge — an OpenAI-compatible endpoint, a loaded local model — into
 * one that answers the host's prompt; the host reads and checks its reply.
 */
import type { Judge } from "../judge.ts";
import type { Board } from "./board.ts";
import type { AgenticJudge } from "./host.ts";
import { WRITABLE_ATTENTION, type ToolName } from "./tools.ts";

/**
 * The analysis the rule policy writes: for every numeric signal, the standardized mean difference between
 * failing and passing exploration cases, as a table and a bar figure, with the two largest as suggestions.
 */
export const STANDARD_ANALYSIS = `// Standardized mean difference (failures − passes) of every numeric signal, exploration split.
const rows = [];
for (const name of input.signals) {
  const f = [], p = [];
  for (const r of input.records) {
    const v = r.signals[name];
    if (typeof v !== "number" || !Number.isFinite(v)) continue;
    (r.failed ? f : p).push(v);
  }
  if (f.length < 3 || p.length < 3) continue;
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const mf = mean(f), mp = mean(p);
  const ss = (xs, m) => xs.reduce((a, b) => a + (b - m) * (b - m), 0);
  const sd = Math.sqrt((ss(f, mf) + ss(p, mp)) / (f.length + p.length - 2));
  if (!(sd > 0)) continue;
  rows.push([name, f.length, p.length, mf, mp, (mf - mp) / sd]);
}
rows.sort((a, b) => Math.abs(b[5]) - Math.abs(a[5]));
const top = rows.slice(0, 8);
return {
  tables: [{ title: "Standardized mean difference by signal (exploration)", columns: ["signal", "failing", "passing", "mean in failures", "mean in passes", "d"], rows: rows.slice(0, 40) }],
  figures: [{ kind: "bar", title: "Largest standardized differences", x: top.map((r) => r[0]), y: top.map((r) => r[5]), xLabel: "signal", yLabel: "d (failures − passes)" }],
  notes: [rows.length + " numeric signals compared on " + input.records.length + " exploration records"],
  suggestions: rows.slice(0, 2).filter((r) => Math.abs(r[5]) >= 0.3).map((r) => ({ signal: r[0], direction: r[5] > 0 ? 1 : -1, why: "standardized difference " + r[5].toFixed(2) + " between failures and passes" })),
};`;

function call(tool: ToolName, why: string, args: Record<string, unknown> = {}): string {
  return JSON.stringify({ tool, args, why });
}

/**
 * The default judge: a fixed order of steps, each taken when the board allows it.
 * @example await rulePolicy().next("", board) // '{"tool":"run_probe","args":{},"why":"nothing is labelled yet"}'
 */
export function rulePolicy(
  options: { readonly analysis?: boolean; readonly clusters?: boolean; readonly searchProbes?: boolean } = {},
): AgenticJudge {
  const analysis = options.analysis ?? true;
  const clusters = options.clusters ?? true;
  const searchProbes = options.searchProbes ?? false;
  return {
    id: "rules",
    next: async (_prompt: string, board: Board) => {
      const can = (t: ToolName) => board.available.includes(t);
      const done = (t: ToolName) => (board.calls[t] ?? 0) > 0;
      if (!board.probe) return can("run_probe") ? call("run_probe", "nothing is labelled yet") : stopNo(board);
      if (!board.stats && can("run_stats")) return call("run_stats", "test every signal on the exploration split");
      if (searchProbes && !done("search_probes") && can("search_probes"))
        return call("search_probes", "look for failing variants of the exploration cases (a probe budget was given)");
      if (clusters && !done("cluster_failures") && can("cluster_failures") && board.probe.explore.failures >= 10)
        return call("cluster_failures", "see whether the failures fall into distinct modes");
      if (analysis && board.analyses.length === 0 && can("run_analysis") && !board.hypotheses)
        return call("run_analysis", "compare failures and passes on every signal beyond the screen", {
          code: STANDARD_ANALYSIS,
          purpose: "standardized mean difference of every numeric signal",
        });
      if (!board.hypotheses && can("propose_hypotheses")) {
        const suggested = board.analyses
          .flatMap((a) => a.suggestions.map((s) => s.signal))
          .filter((s, i, all) => all.indexOf(s) === i && !board.stats?.selected.includes(s));
        // After a refusal (a name run_stats did not test) it freezes the screen's signals alone, so it cannot loop.
        const refusedBefore = board.refused.some((r) => r.tool === "propose_hypotheses");
        const signals = refusedBefore ? [] : suggested;
        return call(
          "propose_hypotheses",
          signals.length ? "freeze the screened signals and the analysis' suggestions" : "freeze the screened signals",
          signals.length ? { signals } : {},
        );
      }
      if (board.hypotheses && !board.verdicts && can("test_hypothesis"))
        return call("test_hypothesis", "decide the frozen hypotheses once on the sealed split");
      const supported = (board.verdicts ?? []).filter((v) => v.verdict === "SUPPORTED").map((v) => v.id);
      const attention = board.hypotheses?.find((h) => supported.includes(h.id) && WRITABLE_ATTENTION.test(h.signal));
      if (attention && can("run_surgery") && !board.surgery)
        return call("run_surgery", `test ${attention.id}'s mechanism by writing the attention it names`, {
          hypothesis: attention.id,
        });
      if (board.verdicts && can("run_fix") && !board.fix) return call("run_fix", "try the repair ladder");
      if (supported.length)
        return call("stop", `${supported[0]} is SUPPORTED on the sealed split`, {
          success: true,
          hypothesis: supported[0],
          summary: `${supported[0]} was tested on the sealed split and is SUPPORTED`,
        });
      return stopNo(board);
    },
  };
}

function stopNo(board: Board): string {
  return call("stop", "no hypothesis was SUPPORTED", {
    success: false,
    summary: board.verdicts?.length
      ? `no hypothesis was SUPPORTED on the sealed split (${board.verdicts.map((v) => `${v.id} ${v.verdict}`).join(", ")})`
      : "nothing to decide: no hypothesis came out of the exploration split",
  });
}

/**
 * A text judge (OpenAI-compatible endpoint, local model) answering the host's prompt.
 * @example textJudge(openAICompatibleJudge({ baseUrl: "http://localhost:8000/v1", model: "qwen" })).id // "openai:http://localhost:8000/v1/chat/completions#qwen"
 */
export function textJudge(judge: Judge): AgenticJudge {
  return {
    id: judge.id ?? "text judge",
    next: (prompt, _board, options) => judge(prompt, options?.signal ? { signal: options.signal } : {}),
  };
}
