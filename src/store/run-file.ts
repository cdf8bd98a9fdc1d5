import { checkExport } from "./codec.ts";
import type { RunExport } from "./types.ts";

/** Largest run file read (a 100k-case run with its dataset is ~40 MB). */
export const MAX_RUN_FILE = 512 * 2 ** 20;

/**
 * Reads a run file (the `evalrx-run` JSON that `exportRun` and the CLI write)
 * and checks it whole before anything is stored; throws naming what is wrong.
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
