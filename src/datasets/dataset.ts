import type { Problem, ImportedCase, ImportResult } from "./types.ts";
import { datasetVersion } from "./identity.ts";
import { rowToCase } from "./row.ts";
import { holdout, select, type Holdout, type HoldoutOptions, type Selection } from "./select.ts";

/** What `add` did: the ids added, the ids already present (left untouched), and rows that were not cases. */
export interface AddResult {
  readonly added: string[];
  readonly skipped: string[];
  readonly problems: Problem[];
}

/** Fields `update` may change. `input` is not one of them: a different input is a different case. */
const EDITABLE = ["expected", "tags", "split", "cluster", "status", "meta", "label"] as const;
type Editable = (typeof EDITABLE)[number];

/**
 * A dataset in memory: its cases in order, the problems its import found,
 * and the edits a user may make (append new cases, edit one, archive).
 *
 * @example
 * const ds = Dataset.from(await importDataset(file.stream(), { name: file.name }));
 * ds.add([{ id: "new-1", input: "…" }]); ds.update("q7", { status: "archived" }); ds.version
 */
export class Dataset {
  #cases: ImportedCase[];
  #byId: Map<string, number>;
  readonly #problems: Problem[];

  constructor(cases: readonly ImportedCase[] = [], problems: readonly Problem[] = []) {
    this.#cases = [];
    this.#byId = new Map();
    for (const c of cases) {
      if (this.#byId.has(c.id)) throw new Error(`Dataset: id '${c.id}' appears twice; ids must be unique`);
      this.#byId.set(c.id, this.#cases.length);
      this.#cases.push(c);
    }
    this.#problems = [...problems];
  }

  /** The dataset an import produced, keeping its problems. */
  static from(result: ImportResult): Dataset {
    return new Dataset(result.cases, result.problems);
  }

  get cases(): readonly ImportedCase[] {
    return this.#cases;
  }

  get size(): number {
    return this.#cases.length;
  }

  /** `datasetVersion` of the current cases. */
  get version(): string {
    return datasetVersion(this.#cases);
  }

  /** Every row the import could not use, with its line and reason. */
  problems(): readonly Problem[] {
    return this.#problems;
  }

  get(id: string): ImportedCase | undefined {
    const at = this.#byId.get(id);
    return at === undefined ? undefined : this.#cases[at];
  }

  /**
   * Appends rows whose id is new; a row whose id exists is skipped (never
   * overwritten) and reported in `skipped`; a row that is not a case is a
   * problem (numbered by its position in `rows`, 1-based).
   */
  add(rows: readonly unknown[]): AddResult {
    const added: string[] = [];
    const skipped: string[] = [];
    const problems: Problem[] = [];
    rows.forEach((row, i) => {
      const result = rowToCase(row);
      if (!("case" in result)) {
        problems.push({ line: i + 1, reason: result.reason, ...(result.id !== undefined && { id: result.id }) });
        return;
      }
      if (this.#byId.has(result.case.id)) {
        skipped.push(result.case.id);
        return;
      }
      this.#byId.set(result.case.id, this.#cases.length);
      this.#cases.push(result.case);
      added.push(result.case.id);
    });
    return { added, skipped, problems };
  }

  /**
   * Edits one case and returns it. Refuses an unknown id, an unknown key, and
   * any edit to `input` or `id`: a different input is a different case.
   */
  update(id: string, changes: Readonly<Partial<Record<Editable, unknown>>> & Record<string, unknown>): ImportedCase {
    const at = this.#byId.get(id);
    if (at === undefined) throw new Error(`update(): no case '${id}' in this dataset`);
    for (const key of Object.keys(changes)) {
      if (key === "input")
        throw new Error(`update('${id}'): a different input is a different case: add it and archive this one`);
      if (key === "id") throw new Error(`update('${id}'): ids do not change; add a new case and archive this one`);
      if (!(EDITABLE as readonly string[]).includes(key))
        throw new Error(`update('${id}'): unknown key '${key}'; editable keys are ${EDITABLE.join(", ")}`);
    }
    const current = this.#cases[at]!;
    const merged: Record<string, unknown> = { ...current, ...changes };
    const result = rowToCase(merged);
    if (!("case" in result)) throw new Error(`update('${id}'): ${result.reason}`);
    this.#cases[at] = result.case;
    return result.case;
  }

  select(selection?: Selection): ImportedCase[] {
    return select(this.#cases, selection);
  }

  holdout(fraction: number, options?: HoldoutOptions): Holdout<ImportedCase> {
    return holdout(this.#cases, fraction, options);
  }
}
