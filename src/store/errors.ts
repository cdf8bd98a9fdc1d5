/**
 * A write the store could not complete (quota exceeded, disk full, a
 * conflicting record). It says what happened and what was kept, so the
 * caller can tell the user and resume: `kept` counts what is safely stored
 * for this call (0 when the write was atomic and rolled back).
 */
export class StoreError extends Error {
  override readonly name: string = "StoreError";
  constructor(
    message: string,
    readonly kept: { readonly items?: number; readonly cases?: number; readonly note?: string } = {},
    readonly quota?: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A run already has a writer: `lockRun` refused a second one (or a write
 * came from a writer that no longer holds the lock). `holder` says who has it.
 */
export class RunLockedError extends StoreError {
  override readonly name = "RunLockedError";
  constructor(
    readonly runId: string,
    readonly holder: string,
    message?: string,
  ) {
    super(
      message ||
        `run '${runId}' already has a writer: ${holder}. One writer per run: wait for it to finish, or stop it, then resume the run.`,
      { items: 0 },
    );
  }
}
