/**
 * One dataset: its identity and how many cases it holds. Cases live apart, keyed by `[datasetId, caseId]`.
 * Shared by the importers (`src/datasets`, which write it) and the stores (`src/store`, which keep it):
 * neither may import the other, so the shape lives here once.
 */
export interface DatasetRecord {
  /** Chosen by the caller (the CLI uses the file name without its extension). */
  readonly id: string;
  readonly name: string;
  /** `datasetVersion(cases)`: 12 hex characters, changes whenever a case does. */
  readonly version: string;
  /** Where it was imported from (a file name), for the reader. */
  readonly source?: string;
  readonly format?: string;
  readonly caseCount: number;
  /** ISO 8601 timestamps. */
  readonly createdAt: string;
  readonly updatedAt: string;
}
