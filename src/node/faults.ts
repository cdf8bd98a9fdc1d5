/**
 * Named points where the fault-injection suite kills the CLI on purpose:
 * with `EVALRX_FAULT_AT=<name>` in the environment, the process SIGKILLs
 * itself when it reaches that point (as `kill -9` at exactly the worst
 * moment would), so a test can aim at a crash window instead of hoping a
 * timed kill lands in it. Without the variable it does nothing.
 *
 * @example faultPoint("resume-rewrite") // between keeping the old event log and writing the new one
 */
export function faultPoint(name: string): void {
  if (process.env["EVALRX_FAULT_AT"] === name) process.kill(process.pid, "SIGKILL");
}
