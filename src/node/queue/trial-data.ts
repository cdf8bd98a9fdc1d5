import type { GenerateOptions, ImagePixels, ModelInput } from "../../core/index.ts";
import type { Fingerprint } from "../../evals/fingerprint.ts";

/** The BullMQ queue trials go through. */
export const TRIAL_QUEUE = "evalrx-trials";

/** One work item on the queue: one trial (a case × a repeat of a run), everything a worker needs to run it. */
export interface TrialData {
  readonly runId: string;
  readonly caseId: string;
  readonly repeat: number;
  /** The model as the job named it: a bundled key, or a folder under the worker's `--models`. */
  readonly model: string;
  /** The model files' hashes the run's fingerprint holds: a worker whose copy differs refuses the item. */
  readonly identity: Fingerprint["model"];
  readonly prompt: string;
  /** The image: encoded bytes, or decoded RGBA pixels, base64. */
  readonly image?:
    { readonly bytes: string } | { readonly width: number; readonly height: number; readonly pixels: string };
  readonly options: Omit<GenerateOptions, "signal" | "attentionBias">;
}

/** What a worker answers for a trial: the model's output, or the model's error (a trial's error, recorded as such). */
export type TrialResult = { readonly output: string } | { readonly error: string };

/** What a worker writes as a job's progress: when it last moved, and what it is doing. */
export interface TrialProgress {
  readonly at: number;
  readonly stage: "loading" | "generating";
  readonly worker: string;
}

/**
 * The work item's id: the same trial always gets the same id, so adding it
 * twice (a restarted coordinator, a resumed run) adds nothing. BullMQ ids may
 * not hold ':', so the parts are URI-encoded and joined by '/'.
 *
 * @example trialJobId("pope-20261201T101500Z", "pope-random-0001", 2) // "pope-20261201T101500Z/pope-random-0001/2"
 */
export function trialJobId(runId: string, caseId: string, repeat: number): string {
  return [runId, caseId, String(repeat)].map((p) => encodeURIComponent(p)).join("/");
}

/** A model input as a work item carries it. */
export function encodeInput(input: ModelInput): Pick<TrialData, "prompt" | "image"> {
  const image = input.image;
  if (image === undefined) return { prompt: input.prompt };
  if (image instanceof Uint8Array)
    return { prompt: input.prompt, image: { bytes: Buffer.from(image).toString("base64") } };
  return {
    prompt: input.prompt,
    image: {
      width: image.width,
      height: image.height,
      pixels: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength).toString("base64"),
    },
  };
}

/** A work item's input as the model takes it. */
export function decodeInput(data: Pick<TrialData, "prompt" | "image">): ModelInput {
  const image = data.image;
  if (image === undefined) return { prompt: data.prompt };
  if ("bytes" in image) return { prompt: data.prompt, image: new Uint8Array(Buffer.from(image.bytes, "base64")) };
  const pixels: ImagePixels = {
    width: image.width,
    height: image.height,
    data: new Uint8Array(Buffer.from(image.pixels, "base64")) as ImagePixels["data"],
  };
  return { prompt: data.prompt, image: pixels };
}
