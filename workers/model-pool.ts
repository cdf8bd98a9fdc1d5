/**
 * Which copy of the model answers a call, when an investigation's model runs
 * in more than one worker? ONNX Runtime Web runs a small model's session on
 * one thread, so the page uses a second core by loading the model again in a
 * helper worker and spreading independent calls over both.
 *
 * A call goes to the copy its input (image and prompt) is tied to, always the
 * same one: each copy answers a run it already did from memory
 * (`memoSessions`), and an investigation asks for the same input many times
 * over (M1 labels a case, then M5's scaffolds ask it again unmodified; a
 * rewording M1 tried comes back as an L1 candidate), so the same input must
 * meet the same copy. Inputs are many and their keys random, so the calls in
 * flight spread over the copies in the shares set below. Every copy is the same model on
 * the same runtime, so an answer does not depend on the copy.
 *
 * Each copy answers one call at a time, in the order given: the local copy's
 * calls are queued here, a helper's in its own worker — so a helper goes from
 * one call to the next without waiting for this thread, whose own inference
 * runs in long stretches that let no message in. Before each local call this
 * thread lets waiting messages in (a helper's answers; then its next calls go out).
 */
import type { CaptureOptions, GenerateOptions, ImagePixels, Model, ModelInput, Trace } from "../src/core/model.ts";
import { nextTask } from "../src/core/next-task.ts";

/** A model whose calls are spread over copies, and the copies it has. */
export interface ModelPool {
  /** The model callers use: its calls go to the copies. */
  readonly model: Model;
  /** Adds a copy of the model (a helper worker's): later calls may go to it. */
  add(copy: Model): void;
  /** Takes a copy out (its worker died): its calls, waiting or later, are answered by the others. */
  remove(copy: Model): void;
  /** Calls answered per copy so far, the local model's first. */
  readonly answered: () => readonly number[];
}

/** Thrown for a call given to a copy that was taken out; the pool answers it elsewhere. */
class CopyGone extends Error {
  override readonly name = "CopyGone";
}

interface Lane {
  readonly copy: Model;
  /** True for the local copy: its calls are queued here; a helper queues its own. */
  readonly local: boolean;
  answered: number;
  gone: boolean;
  tail: Promise<unknown>;
}

const FNV_OFFSET = 2166136261;
const fnv = (h: number, byte: number) => Math.imul(h ^ byte, 16777619) >>> 0;

/** MurmurHash3's finaliser: FNV's low bits follow only the bytes' low bits, and the pool reads `key % slots`. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** FNV-1a of an image's bytes (its encoded file, or its pixels), kept per array: one image is asked about often. */
const imageHashes = new WeakMap<object, number>();
function imageHash(image: Uint8Array | ImagePixels): number {
  const bytes = image instanceof Uint8Array ? image : image.data;
  let h = imageHashes.get(bytes);
  if (h === undefined) {
    h = FNV_OFFSET;
    for (let i = 0; i < bytes.length; i++) h = fnv(h, bytes[i]!);
    imageHashes.set(bytes, h);
  }
  return h;
}

/**
 * The number an input is tied to a copy by (see `modelPool`): FNV-1a over its image's bytes and its prompt, mixed.
 * Equal inputs get equal keys, so they meet the copy that has their runs in memory.
 *
 * @example affinityKey({ prompt: "abc" }) === affinityKey({ prompt: "abc" }) // → true
 */
export function affinityKey(input: ModelInput): number {
  let h = input.image !== undefined ? imageHash(input.image) : FNV_OFFSET;
  for (let i = 0; i < input.prompt.length; i++) {
    const c = input.prompt.charCodeAt(i);
    h = fnv(fnv(h, c & 0xff), c >>> 8);
  }
  return mix(h);
}

/**
 * The number an input is tied to a copy by when only its image counts (see `modelPool`'s `keyOf`): an eval asks
 * several questions of each image once each, and a copy that saw the image has its encoding in memory.
 *
 * @example imageAffinityKey({ prompt: "a cat?", image }) === imageAffinityKey({ prompt: "a dog?", image }) // → true
 */
export function imageAffinityKey(input: ModelInput): number {
  return input.image !== undefined ? mix(imageHash(input.image)) : affinityKey(input);
}

/**
 * How inputs are shared between the local copy and each helper: 2 to 3. The local copy's thread also runs the
 * investigation itself (evaluators, the store's writes, the event log, these messages): with an even share it had
 * 11.2 s of CPU in M5 against its helper's 7.4 s (`bench-investigate.node.ts`, 600 demo cases), so it takes less.
 */
const LOCAL_SLOTS = 2;
const HELPER_SLOTS = 3;

/**
 * A pool over `local` (the model worker's own copy) that more copies join with `add`.
 *
 * @example
 * const pool = modelPool(local);
 * pool.add(helper); // a second worker's copy
 * await Promise.all(cases.map((c) => pool.model.generate(c.input))); // each on its input's copy
 */
export function modelPool(
  local: Model,
  /** What ties an input to a copy: its image and prompt by default, `imageAffinityKey` for its image alone. */
  keyOf: (input: ModelInput) => number = affinityKey,
): ModelPool {
  const lanes: Lane[] = [];
  const join = (copy: Model) =>
    lanes.push({ copy, local: copy === local, answered: 0, gone: false, tail: Promise.resolve() });
  join(local);

  /** The lane a key names: each copy owns a run of slots in `key % slots`, the local copy fewer (`LOCAL_SLOTS`). */
  const laneOf = (key: number): Lane => {
    if (lanes.length === 1) return lanes[0]!;
    let slot = key % (LOCAL_SLOTS + HELPER_SLOTS * (lanes.length - 1));
    if (slot < LOCAL_SLOTS) return lanes[0]!;
    slot -= LOCAL_SLOTS;
    return lanes[1 + Math.floor(slot / HELPER_SLOTS)]!;
  };

  const call = <T>(input: ModelInput, run: (copy: Model) => Promise<T>): Promise<T> => {
    const lane = laneOf(keyOf(input));
    const answer = lane.local
      ? lane.tail.then(async () => {
          // The messages already waiting for this thread (a helper's answers) are handled first: a chain of local
          // calls would otherwise hold them until it ends.
          await nextTask();
          return run(lane.copy);
        })
      : Promise.resolve().then(() => {
          if (lane.gone) throw new CopyGone();
          return run(lane.copy);
        });
    if (lane.local) lane.tail = answer.catch(() => undefined);
    return answer
      .finally(() => void lane.answered++)
      .catch((error: unknown) => {
        if (lane.gone) return call(input, run);
        throw error;
      });
  };

  const model: Model = {
    spec: local.spec,
    capabilities: local.capabilities,
    generate: (input: ModelInput, options?: GenerateOptions) => call(input, (copy) => copy.generate(input, options)),
    forward: (input: ModelInput, capture?: CaptureOptions): Promise<Trace> =>
      call(input, (copy) => copy.forward(input, capture)),
    // The copies belong to whoever made them (the model worker, the helper's starter).
    dispose: async () => {},
  };
  return {
    model,
    add: join,
    remove(copy) {
      const at = lanes.findIndex((l) => l.copy === copy);
      // The local copy stays: it answers whatever is left.
      if (at <= 0) return;
      lanes[at]!.gone = true;
      lanes.splice(at, 1);
    },
    answered: () => lanes.map((l) => l.answered),
  };
}
