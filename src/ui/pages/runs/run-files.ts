import type { RunExport } from "../../../store/types.ts";

/** Largest run file the page reads (a 100k-case run with its dataset is ~60 MB). */
export const MAX_RUN_FILE = 512 * 2 ** 20;

/**
 * Reads a run file (the CLI's `evalrx-run` JSON) and checks its shape before
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
  return checkRunExport(data);
}

/** A run file's shape, checked field by field (the store checks items and traces again as it imports them). */
export function checkRunExport(data: unknown): RunExport {
  const d = data as Partial<RunExport> | null;
  if (!d || typeof d !== "object" || Array.isArray(d)) throw new Error("expected a JSON object (an exported run)");
  if (d.format !== "evalrx-run")
    throw new Error(`format is ${JSON.stringify(d.format)}; expected "evalrx-run" (a file written by exportRun)`);
  if (d.version !== 1) throw new Error(`version is ${JSON.stringify(d.version)}; this app reads version 1`);
  const run = d.run as Partial<RunExport["run"]> | undefined;
  if (!run || typeof run !== "object") throw new Error("run is missing; expected the run's record");
  for (const field of ["id", "kind", "dataset", "model", "status", "startedAt"] as const)
    if (typeof run[field] !== "string" || !run[field]) throw new Error(`run.${field} is missing; expected a string`);
  for (const field of ["items", "events", "scores", "traces"] as const)
    if (!Array.isArray(d[field]))
      throw new Error(`${field} is ${JSON.stringify(d[field]) ?? "missing"}; expected a list`);
  return d as RunExport;
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
