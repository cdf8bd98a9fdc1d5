import { createHash } from "node:crypto";
import type { GenerateOptions, ImagePixels, ModelInput } from "../../core/index.ts";
import type { Fingerprint } from "../../evals/fingerprint.ts";

/** The BullMQ queue trials go through. */
export const TRIAL_QUEUE = "evalrx-trials";

/** An image as a work item carries it: encoded bytes, or decoded RGBA pixels, base64. */
export type EncodedImage =
  { readonly bytes: string } | { readonly width: number; readonly height: number; readonly pixels: string };

/** One trial (a case × a repeat of a run) inside a work item. */
export interface TrialInput {
  readonly caseId: string;
  readonly repeat: number;
  readonly prompt: string;
  /** Which of the item's `images` this trial's input holds (trials of one image share it). */
  readonly image?: number;
  readonly options: Omit<GenerateOptions, "signal" | "attentionBias">;
}

/**
 * One work item on the queue: a few trials of one run (a batch), everything
 * a worker needs to run them but the images, which it names by content
 * ({@link imageKey}): each image goes to Redis once ({@link imageRedisKey})
 * and a worker keeps the ones it has read, so an item is a few hundred bytes
 * of ids and prompts, not kilobytes of base64, however often its images recur.
 * A batch, not a trial, so the queue's own cost (a few Redis round trips,
 * ~2.5 ms) is paid once for several ~3 ms trials.
 */
export interface TrialData {
  readonly runId: string;
  /** The model as the job named it: a bundled key, or a folder under the worker's `--models`. */
  readonly model: string;
  /** The model files' hashes the run's fingerprint holds: a worker whose copy differs refuses the item. */
  readonly identity: Fingerprint["model"];
  readonly trials: readonly TrialInput[];
  /** The content keys of the images the trials hold, each once. */
  readonly images: readonly string[];
}

/** What a worker answers for one trial: the model's output, or the model's error (a trial's error, recorded as such). */
export type TrialResult = { readonly output: string } | { readonly error: string };

/** What a worker answers for a work item: one result per trial, in the item's order. */
export interface TrialBatchResult {
  readonly results: readonly TrialResult[];
}

/** What a worker writes as a job's progress: when it last moved, what it is doing, and how many trials it has done. */
export interface TrialProgress {
  readonly at: number;
  /** `waiting`: fetched and held while another item of the same worker runs the model. */
  readonly stage: "loading" | "generating" | "waiting";
  readonly worker: string;
  readonly done?: number;
}

/**
 * The work item's id: the same trials of a run always get the same id, so
 * adding them twice (a restarted coordinator, a resumed run that forms the
 * same batch) adds nothing, and a batch of other trials never takes another's
 * answer. BullMQ ids may not hold ':', so the run is URI-encoded, then '/',
 * then the first trial and a digest of all of them.
 *
 * @example batchJobId("pope-20261201T101500Z", [{ caseId: "pope-random-0001", repeat: 2 }]) // "pope-20261201T101500Z/pope-random-0001/2/1-<16 hex>"
 */
export function batchJobId(runId: string, trials: readonly { caseId: string; repeat: number }[]): string {
  if (trials.length === 0) throw new RangeError("batchJobId(): a work item holds at least one trial, got none");
  const digest = createHash("sha256");
  for (const t of trials) digest.update(`${t.caseId}\u0000${t.repeat}\n`);
  const first = trials[0]!;
  return [runId, first.caseId, String(first.repeat), `${trials.length}-${digest.digest("hex").slice(0, 16)}`]
    .map((p) => encodeURIComponent(p))
    .join("/");
}

/** How long an image stays on Redis after a run last sent it (a work item retried later than this fails, saying so). */
export const IMAGE_TTL_SECONDS = 24 * 3600;

/**
 * Which image is this, by content? The same bytes (or the same decoded
 * pixels and size) always get the same key, any other image another, so a
 * worker may keep an image it read under its key for every later item.
 *
 * @example imageKey(pngBytes) // "b-<64 hex>"; decoded pixels give "p<width>x<height>-<64 hex>"
 */
export function imageKey(image: NonNullable<ModelInput["image"]>): string {
  if (image instanceof Uint8Array) return `b-${createHash("sha256").update(image).digest("hex")}`;
  const bytes = new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  return `p${image.width}x${image.height}-${createHash("sha256").update(bytes).digest("hex")}`;
}

/** Where on Redis the image of key `key` (see {@link imageKey}) lies, beside the queue's own keys. */
export function imageRedisKey(key: string): string {
  return `${TRIAL_QUEUE}:image:${key}`;
}

/** An image as it is kept on Redis. */
export function encodeImage(image: NonNullable<ModelInput["image"]>): EncodedImage {
  if (image instanceof Uint8Array) return { bytes: Buffer.from(image).toString("base64") };
  return {
    width: image.width,
    height: image.height,
    pixels: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength).toString("base64"),
  };
}

/** A work item's image as the model takes it. */
export function decodeImage(image: EncodedImage): NonNullable<ModelInput["image"]> {
  if ("bytes" in image) return new Uint8Array(Buffer.from(image.bytes, "base64"));
  const pixels: ImagePixels = {
    width: image.width,
    height: image.height,
    data: new Uint8Array(Buffer.from(image.pixels, "base64")) as ImagePixels["data"],
  };
  return pixels;
}
