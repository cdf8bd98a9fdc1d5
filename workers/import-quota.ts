import { bytes } from "../src/figures/format.ts";

/** Where a dataset import stood when the browser's storage refused a write. */
export interface ImportAtQuota {
  readonly datasetId: string;
  /** A new dataset is removed again (stored whole or not at all); cases added to an existing one are kept. */
  readonly kept: "nothing" | "added";
  /** Rows read so far, and how many of them were stored. */
  readonly rowsRead: number;
  readonly rowsStored: number;
  /** The file's size, and how many of its bytes were read. */
  readonly fileBytes: number;
  readonly bytesRead: number;
}

/** Is this the store saying the browser's storage quota is used up? */
export function isQuotaFailure(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  return name === "QuotaExceededError" || (error as { quota?: unknown } | undefined)?.quota === true;
}

/**
 * What a full quota means for an import: what was kept, and about how much
 * space the rest needs. Stored cases take about as many bytes as their rows
 * in the file, so the rest needs about the bytes of the rows not stored (the
 * whole file for a new dataset, which is removed again).
 *
 * @example importQuotaMessage({ datasetId: "big", kept: "added", rowsRead: 40000, rowsStored: 30000, fileBytes: 60e6, bytesRead: 24e6 })
 * // "The browser's storage is full: 30000 of the file's rows were stored in 'big' and are kept; the rest of the file needs about 40.1 MB more. Free space (delete old runs, traces or datasets), then import it again, adding to 'big': only the cases it lacks are stored."
 */
export function importQuotaMessage(at: ImportAtQuota): string {
  const storedBytes = at.rowsRead > 0 ? (at.bytesRead * at.rowsStored) / at.rowsRead : 0;
  const need = at.kept === "nothing" ? at.fileBytes : Math.max(0, at.fileBytes - storedBytes);
  const advice = "Free space (delete old runs, traces or datasets), then import it again";
  return at.kept === "nothing"
    ? `The browser's storage is full: nothing of '${at.datasetId}' was kept (a new dataset is stored whole or not at all); ` +
        `it needs about ${bytes(need)} free. ${advice}.`
    : `The browser's storage is full: ${at.rowsStored} of the file's rows were stored in '${at.datasetId}' and are kept; ` +
        `the rest of the file needs about ${bytes(need)} more. ${advice}, adding to '${at.datasetId}': only the cases it lacks are stored.`;
}
