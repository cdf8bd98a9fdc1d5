/** EvalRx: the library entry point. Contracts first; each concern has its own entry (`evalrx/stats`, …). */
export * from "./core/index.ts";
