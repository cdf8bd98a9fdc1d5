/// <reference lib="webworker" />
/**
 * The page's data worker: dataset imports (check a dropped file, import it,
 * add the demo datasets) and the dataset view (cases read, filtered and
 * windowed here), so no parse, hash or filter of a large file runs on the
 * page's thread. It opens its own connection to the page's IndexedDB and
 * announces every write on the store's change feed.
 *
 * @example
 *   const data = wrap<DataWorkerApi>(new Worker(new URL("../../workers/data.worker.ts", import.meta.url), { type: "module" }));
 *   const report = await data.check({ files, dataset: 0 }, 1);
 */
import { expose } from "comlink";
import { addDemo, cancel, check, importFiles } from "./data-import.ts";
import { caseAt, closeView, facets, openView, preview, query, rows } from "./data-view.ts";

const api = { check, importFiles, addDemo, cancel, openView, query, rows, caseAt, facets, preview, closeView };

export type DataWorkerApi = typeof api;
expose(api);
