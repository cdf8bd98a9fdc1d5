import { closeSync, existsSync, openSync, statfsSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

/** The largest filesystem a `fill` fault may fill: a test's small tmpfs, never a real disk. */
const FILLABLE_BYTES = 64 * 1024 * 1024;

/**
 * Named points where the fault-injection suite breaks the CLI on purpose, so
 * a test can aim at a crash window instead of hoping a timed kill lands in it:
 *
 * - `EVALRX_FAULT_AT=<name>`: the process SIGKILLs itself when it reaches
 *   that point, as `kill -9` at exactly the worst moment would;
 * - `EVALRX_FAULT_AT=<name>:fill`: the filesystem holding `dir` is filled
 *   (a file `.evalrx-fault-filler` grows until the disk is full) and the
 *   process goes on into a real full disk. Refused on a filesystem over
 *   64 MB: it is for a test's small tmpfs.
 * - `EVALRX_FAULT_AT=<name>:pause` (only where {@link faultPause} is
 *   awaited): the process writes `dir/.evalrx-fault-paused` and waits, its
 *   event loop (and so its lock's heartbeat) running, until
 *   `dir/.evalrx-fault-resume` exists: a rival can be started while this one
 *   is known to be mid-run, however slowly either starts.
 *
 * Without the variable it does nothing.
 *
 * @example faultPoint("report-write", out) // just before report.json and report.html are written
 */
export function faultPoint(name: string, dir?: string): void {
  const at = process.env["EVALRX_FAULT_AT"];
  if (at === name) process.kill(process.pid, "SIGKILL");
  if (at === `${name}:fill` && dir !== undefined) fillDisk(dir);
}

/** {@link faultPoint}, and the `<name>:pause` fault: waits at this point until the test lets it go on. */
export async function faultPause(name: string, dir: string): Promise<void> {
  faultPoint(name, dir);
  if (process.env["EVALRX_FAULT_AT"] !== `${name}:pause`) return;
  writeFileSync(join(dir, ".evalrx-fault-paused"), String(process.pid));
  while (!existsSync(join(dir, ".evalrx-fault-resume"))) await new Promise((done) => setTimeout(done, 50));
}

function fillDisk(dir: string): void {
  const fs = statfsSync(dir);
  if (fs.blocks * fs.bsize > FILLABLE_BYTES)
    throw new Error(`EVALRX_FAULT_AT=…:fill refuses to fill ${dir}: its filesystem is over 64 MB (not a test tmpfs)`);
  const fd = openSync(join(dir, ".evalrx-fault-filler"), "a");
  const block = Buffer.alloc(4096, 0x2e);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
}
