/**
 * From imported cases (an eval log read by the datasets importers) to the
 * plain table M2–M4 work on: the failure label, the clusters, and every
 * `meta` column (plus the user's `split`) as a candidate signal.
 */
import type { ImportedCase } from "../datasets/index.ts";
import { tagsOf } from "./protocol.ts";
import type { CaseTable } from "./signals.ts";

/** How the label column was read; stated in the report. */
export interface LabelReading {
  readonly column: string | null;
  /** "pass": the importer's verdict true means the case passed; "fail": the column names failures (e.g. `hallucinated`). */
  readonly trueMeans: "pass" | "fail";
  readonly unlabeled: number;
}

const FAILURE_NAME = /fail|error|wrong|incorrect|halluc|bug|mistake/i;

/**
 * Builds the case table from labelled cases, or throws a message that says how to mend the file.
 *
 * Example: `casesToTable(cases, { labelColumn: "passed" })` → `{ table: { ids, failed, columns: Map{…} }, label: { column: "passed", trueMeans: "pass", unlabeled: 0 } }`.
 */
export function casesToTable(
  cases: readonly ImportedCase[],
  options: {
    readonly labelColumn?: string | null;
    readonly signals?: readonly string[];
    readonly columns?: readonly string[];
  } = {},
): { table: CaseTable; label: LabelReading } {
  const labelled = cases.filter((c) => c.label !== undefined);
  const column = options.labelColumn ?? null;
  if (labelled.length === 0) {
    const known = options.columns?.length ? ` Columns are [${options.columns.map((c) => `'${c}'`).join(", ")}].` : "";
    throw new Error(
      `no label column: no column reads as a pass/fail verdict (looked for passed, pass, correct, is_correct, success, verdict, label).` +
        ` Name it with --label COL (values pass/fail, true/false, 1/0, C/I, yes/no).${known}`,
    );
  }
  const trueMeans = column && FAILURE_NAME.test(column) ? "fail" : "pass";
  const keys = new Set<string>();
  for (const c of labelled) for (const k of Object.keys(c.meta)) keys.add(k);
  if (labelled.some((c) => c.split !== undefined)) keys.add("split");
  let names = [...keys].sort();
  if (options.signals?.length) {
    const missing = options.signals.filter((s) => !keys.has(s));
    if (missing.length)
      throw new Error(
        `--signals names ${missing.map((m) => `'${m}'`).join(", ")}, not columns of the file; candidate columns are [${names.map((n) => `'${n}'`).join(", ")}]`,
      );
    names = [...options.signals];
  }
  const columns = new Map<string, unknown[]>();
  const tags = new Map<string, string[]>();
  for (const name of names) {
    columns.set(
      name,
      labelled.map((c) => (name === "split" && !(name in c.meta) ? c.split : c.meta[name])),
    );
    tags.set(name, tagsOf(name.replace(/[_.=-]/g, " ")));
  }
  const hasClusters = labelled.some((c) => c.cluster !== undefined);
  return {
    table: {
      ids: labelled.map((c) => c.id),
      failed: labelled.map((c) => (trueMeans === "pass" ? c.label === false : c.label === true)),
      clusters: hasClusters ? labelled.map((c) => c.cluster ?? `id:${c.id}`) : undefined,
      columns,
      tags,
    },
    label: { column, trueMeans, unlabeled: cases.length - labelled.length },
  };
}
