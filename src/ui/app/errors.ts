/**
 * One place that turns any thrown value into the sentence a person reads.
 * Errors that cross a worker boundary arrive as plain `Error`s that keep
 * their `name` (comlink copies it), so they are told apart by name.
 *
 * @example errorText(Object.assign(new Error("generate was cancelled"), { name: "CancelledError" })) // "Cancelled."
 */
export function errorText(error: unknown): string {
  if (error === undefined || error === null) return "Something failed without saying why.";
  if (typeof error === "string") return error;
  if (!(error instanceof Error)) return String(error);
  switch (error.name) {
    case "CancelledError":
    case "AbortError":
      return "Cancelled.";
    case "QuotaExceededError":
      return `The browser's storage is full: ${error.message}. Free space (Settings → Storage) or delete old runs, then try again; what was stored before is kept.`;
    default:
      return error.message || error.name;
  }
}

/** True for a cancellation (ours or the platform's), which pages show as a state rather than a failure. */
export function isCancellation(error: unknown): boolean {
  return error instanceof Error && (error.name === "CancelledError" || error.name === "AbortError");
}
