import { checkExport, decodeTrace, encodeTrace, fromBase64, toBase64 } from "./codec.ts";
import { StoreError } from "./errors.ts";
import type { ExportOptions, RunExport, RunProgress, RunRecord, Store } from "./types.ts";

/** Builds a run export from any store (shared by both implementations). */
export async function buildExport(store: Store, run: RunRecord, options: ExportOptions = {}): Promise<RunExport> {
  const [items, events, scores, traces, progress] = await Promise.all([
    store.items(run.id),
    store.events(run.id),
    store.scores(run.id),
    store.traces(run.id),
    store.progress(run.id),
  ]);
  const out: { -readonly [K in keyof RunExport]: RunExport[K] } = {
    format: "evalrx-run",
    version: 1,
    exportedAt: new Date().toISOString(),
    run,
    ...(progress && { progress }),
    items,
    events,
    scores,
    traces: traces.map(encodeTrace),
  };
  if (options.dataset !== false) {
    const dataset = await store.getDataset(run.dataset);
    if (dataset) {
      out.dataset = dataset;
      out.cases = await store.cases(run.dataset);
      if (options.images) {
        const hashes = [
          ...new Set(out.cases.map((c) => c.input.image).filter((i): i is string => !!i?.startsWith("sha256:"))),
        ];
        const images = [];
        for (const hash of hashes) {
          const image = await store.getImage(hash);
          if (image) images.push({ hash: image.hash, type: image.type, base64: toBase64(image.bytes) });
        }
        out.images = images;
      }
    }
  }
  return out;
}

/**
 * Imports a run export into any store: images first, then the dataset (only
 * when the store does not have it: an existing dataset is never overwritten),
 * then the run and its records. Rejects a run id that exists.
 */
export async function importInto(store: Store, raw: RunExport): Promise<void> {
  const data = checkExport(raw);
  if (await store.getRun(data.run.id)) throw new StoreError(`importRun(): a run '${data.run.id}' already exists`);
  for (const image of data.images ?? []) {
    const hash = await store.putImage(fromBase64(image.base64), image.type);
    if (hash !== image.hash)
      throw new StoreError(`importRun(): image ${image.hash} does not match its bytes (${hash})`);
  }
  if (data.dataset && !(await store.getDataset(data.dataset.id)))
    await store.putDataset(data.dataset, data.cases ?? []);
  await store.createRun(data.run);
  if (data.items.length || data.progress) {
    const progress = data.progress ?? { done: data.items.length, total: data.items.length, updatedAt: data.exportedAt };
    const { runId: _runId, ...marker } = progress as RunProgress;
    await store.appendItems(data.run.id, data.items, marker);
  }
  if (data.events.length) {
    const sorted = [...data.events].sort((a, b) => a.seq - b.seq);
    sorted.forEach((e, i) => {
      if (e.seq !== i)
        throw new StoreError(`importRun(): event seq ${e.seq} where ${i} was expected; the log has a gap`);
    });
    await store.appendEvents(
      data.run.id,
      sorted.map(({ runId: _r, seq: _s, ...e }) => e),
    );
  }
  if (data.scores.length) await store.putScores(data.scores);
  if (data.traces.length) await store.putTraces(data.traces.map(decodeTrace));
}
