/**
 * The agentic loop over a table that is already labelled — an eval log's
 * cases and columns (`evalrx explore`), or a probe that ran before. Its
 * run_probe reads the table instead of a model; there is no model to
 * intervene on or repair, so run_surgery, run_fix and search_probes are
 * unavailable (the host says so when the judge asks).
 */
import type { CaseTable } from "../signals.ts";
import type { AgenticPipeline } from "./host.ts";

/**
 * @example tablePipeline(table, "log.csv").probe.cost // 0
 */
export function tablePipeline(table: CaseTable, source: string): AgenticPipeline {
  return {
    probe: {
      cost: 0,
      run: async () => ({
        table,
        modelCalls: 0,
        result: `${table.ids.length} labelled cases read from ${source} (${table.failed.filter(Boolean).length} failing, ${table.columns.size} columns)`,
      }),
    },
  };
}
