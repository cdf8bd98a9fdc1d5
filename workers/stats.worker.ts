/// <reference lib="webworker" />
/**
 * The statistics catalog off the main thread: heavy resampling (pairedBootstrap,
 * comparePaired on graded scores) runs here so the page stays responsive. Every function of
 * `src/stats` is exposed unchanged through comlink; typed arrays travel by structured clone,
 * and thrown errors arrive with their message. Store-backed jobs open IndexedDB here and take
 * run ids, so a big run never crosses to the page: run tables (`run-tables.ts`) and the
 * Compare page's gate, calibrate and power (`compare-jobs.ts`).
 *
 * @example
 *   const worker = new Worker(new URL("../../workers/stats.worker.ts", import.meta.url), { type: "module" });
 *   const stats = wrap<StatsWorkerApi>(worker);
 *   const { lo, hi, p } = await stats.pairedBootstrap(diffs, clusters, { seed: 1 });
 */
import { expose } from "comlink";
import * as stats from "../src/stats/index.ts";
import { caseTable, datasetFacets, exportRunFile, importRunFile, runCase } from "./run-tables.ts";
import { calibrateStored, caseOutputsStored, compareStored, powerStored, supersede } from "./compare-jobs.ts";

// A plain object (not the module namespace) so comlink sees ordinary own properties.
// Beside the catalog: a run's case table, read from IndexedDB here so the page never holds a big run; and the
// Compare page's jobs (gate, compare, calibrate, power on stored runs, the library's own functions).
const catalog = {
  ...stats,
  caseTable,
  runCase,
  datasetFacets,
  importRunFile,
  exportRunFile,
  compareStored,
  caseOutputsStored,
  calibrateStored,
  powerStored,
  supersede,
};

export type StatsWorkerApi = typeof catalog;
expose(catalog);
