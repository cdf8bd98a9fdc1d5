/**
 * `evalrx/store`: one store interface (`types.ts`). IndexedDB implements it in
 * the page (`idb.browser.ts`), a directory of files under Node
 * (`files.node.ts`); import those directly where the platform is known.
 */
export type * from "./types.ts";
export { RunLockedError, StoreError } from "./errors.ts";
export { resumePoint } from "./resume.ts";
export { buildExport, importInto } from "./portable.ts";
export { encodeTrace, decodeTrace, checkExport } from "./codec.ts";
