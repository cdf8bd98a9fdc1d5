import { checkExport } from "../../../store/codec.ts";
import type { RunExport } from "../../../store/types.ts";

/** Largest run file the page reads (a 100k-case run with its dataset is ~60 MB). */
export const MAX_RUN_FILE = 512 * 2 ** 20;

/**
 * Reads a run file (the CLI's `evalrx-run` JSON) and checks it whole before
 * anything is stored; throws naming what is wrong.
 *
 * @example await readRunFile(file) // { format: "evalrx-run", version: 1, run: {...}, items: [...], ... }
 */
export async function readRunFile(file: Blob): Promise<RunExport> {
  if (file.size > MAX_RUN_FILE)
    throw new Error(
      `the file is ${(file.size / 2 ** 20).toFixed(0)} MB; run files up to ${MAX_RUN_FILE / 2 ** 20} MB are read`,
    );
  let data: unknown;
  try {
    data = JSON.parse(await file.text());
  } catch (error) {
    throw new Error(`not JSON: ${(error as Error).message}`, { cause: error });
  }
  // The store's own check: every item, event and score, with the one that is wrong named.
  return checkExport(data);
}

/** Saves JSON as a file download (no server: a blob URL, revoked once the download starts). */
export function downloadJson(data: unknown, fileName: string): void {
  const blob = new Blob([JSON.stringify(data)], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = fileName.replace(/[^\w.-]+/g, "_");
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
