/**
 * Promotion in the page, where an L4 repair's merged folder is kept in this
 * browser's model store. The investigation keeps it as `<model>+lora-…@<run>`
 * (so two runs never replace each other's weights), but the promoted model is
 * loaded, recorded in runs and resumed by its id: `files:<id>`. A name that
 * resolves to no folder would leave a second investigation on it unresumable
 * after a reload, so promotion moves the folder to the promoted id.
 */
import { promote, type LineageRecord } from "../../../agent/lineage/index.ts";
import type { Report } from "../../../report/schema.ts";
import type { ModelFolders } from "../../app/model-folders.ts";

/** Where the page keeps lineage records and model folders (the real ones, or a test's own). */
export interface PromotionPlace {
  /** The promoted models this browser holds already (a new id may not repeat one). */
  readonly records: readonly LineageRecord[];
  readonly add: (record: LineageRecord) => Promise<void>;
  readonly folders: Pick<ModelFolders, "list" | "files" | "save" | "remove">;
}

/**
 * Promotes `signature` of `report` as `promote` does and adds the record; an L4 repair whose merged folder is
 * kept here (`files:<folder>`) has that folder moved to the promoted id first, so the record's weights — and the
 * name the loaded model goes by, `files:<id>` — name one folder. Refuses, before writing anything, an id that a
 * promoted model or another kept folder has already.
 *
 * @example
 * const record = await promoteHere(report, "lora:last-layer.qkvo:r4:a8:steps300:seed1", {
 *   records, add: (r) => db.add(r), folders: new ModelFolders(),
 * });
 * record.weights // "files:tiny-vlm+lora-last-layer.qkvo-r4-a8-steps300-seed1" (the report: "…@inv-1")
 */
export async function promoteHere(
  report: Report,
  signature: string,
  place: PromotionPlace,
  options: { readonly parent?: LineageRecord; readonly weights?: string } = {},
): Promise<LineageRecord> {
  const record = promote(report, signature, options);
  if (place.records.some((r) => r.id === record.id))
    throw new Error(`a promoted model '${record.id}' exists already in this browser; it is not promoted twice`);
  const kept = options.weights?.startsWith("files:") ? options.weights.slice("files:".length) : undefined;
  if (kept === undefined || kept === record.id) {
    await place.add(record);
    return record;
  }
  if ((await place.folders.list()).some((f) => f.name === record.id))
    throw new Error(
      `a model folder '${record.id}' is kept in this browser already; remove it on the Models page to promote this repair under that id`,
    );
  const files = await place.folders.files(kept);
  await place.folders.save(
    record.id,
    [...files].map(([path, file]) => ({ path, file })),
  );
  const moved: LineageRecord = { ...record, weights: `files:${record.id}` };
  try {
    await place.add(moved);
  } catch (error) {
    await place.folders.remove(record.id).catch(() => undefined);
    throw error;
  }
  // The run's folder is a copy now; the report still names it, as the place the weights were first written.
  await place.folders.remove(kept);
  return moved;
}
