/**
 * A bench step that says what it waits for: a line on stderr when it starts, one a minute while it still runs,
 * and its time when it ends; a failure names the step. A bench on a shared machine can take many minutes, and
 * one that prints nothing looks the same whether it works or waits on a page that will never answer.
 */

/** Where a step writes its progress (stderr by default: the bench's figures go to stdout). */
export type StepLog = (text: string) => void;

const stamp = () => new Date().toISOString().slice(11, 19);

/**
 * Runs `run`, saying on `log` that the step `what` started, is still running (every `everyMs`), and ended.
 * Rethrows a failure as `what: <its message>` (the original is its cause).
 *
 * @example await step("adding the demo datasets", () => addDemo(page)) // stderr: "00:12:01 adding the demo datasets…"
 */
export async function step<T>(
  what: string,
  run: () => Promise<T>,
  log: StepLog = (text) => console.error(text),
  everyMs = 60_000,
): Promise<T> {
  if (!what.trim()) throw new Error("step: name what the step does (got an empty name)");
  const t0 = Date.now();
  const seconds = () => ((Date.now() - t0) / 1000).toFixed(0);
  log(`${stamp()} ${what}…`);
  const beat = setInterval(() => log(`${stamp()}   still ${what} (${seconds()} s)`), everyMs);
  try {
    const value = await run();
    log(`${stamp()}   ${what}: done in ${seconds()} s`);
    return value;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${what}: ${message} (after ${seconds()} s)`, { cause: error });
  } finally {
    clearInterval(beat);
  }
}

/** Where an investigation's status badge stands: still going, or one of the states it ends in. */
export type SettledStatus = "finished" | "failed" | "cancelled" | "interrupted";

/** The states an investigation's status badge ends in (handed to page-side waits, which cannot import). */
export const SETTLED_STATUSES: readonly SettledStatus[] = ["finished", "failed", "cancelled", "interrupted"];
const SETTLED = new Set<string>(SETTLED_STATUSES);

/**
 * The investigation's status badge text as a settled state, or undefined while it runs (or shows none yet).
 *
 * @example settledStatus(" failed ") // "failed"
 * @example settledStatus("running") // undefined
 */
export function settledStatus(badge: string | null | undefined): SettledStatus | undefined {
  const text = badge?.trim() ?? "";
  return SETTLED.has(text) ? (text as SettledStatus) : undefined;
}
