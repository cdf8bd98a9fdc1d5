/** `evalrx/store`: one store interface; IndexedDB (`idb.browser.ts`) and files (`files.node.ts`) implement it. */
export type * from "./types.ts";
export { StoreError } from "./errors.ts";
