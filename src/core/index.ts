export * from "./capability.ts";
export * from "./model.ts";
export * from "./case.ts";
export * from "./result.ts";
export * from "./yes-no.ts";
export * from "./dataset.ts";
export * from "./bytes.ts";
export * from "./kept-promises.ts";
