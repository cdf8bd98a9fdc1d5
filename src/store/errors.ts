/**
 * A write the store could not complete (quota exceeded, disk full, a
 * conflicting record). It says what happened and what was kept, so the
 * caller can tell the user and resume: `kept` counts what is safely stored
 * for this call (0 when the write was atomic and rolled back).
 */
export class StoreError extends Error {
  override readonly name = "StoreError";
  constructor(
    message: string,
    readonly kept: { readonly items?: number; readonly cases?: number; readonly note?: string } = {},
    readonly quota?: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
