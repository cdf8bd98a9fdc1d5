/**
 * The platform seam of the runtime: the isomorphic core builds plain tensors
 * and asks an injected `SessionFactory` (onnxruntime-node under Node,
 * onnxruntime-web in a page or worker) to run them, and reads model files
 * through an injected `FileSource` (the file system, `fetch`, or dropped `File`s).
 */

/** A dense tensor as the core sees it; the session adapters convert to and from ONNX Runtime's own. */
export interface PlainTensor {
  readonly type: "float32" | "int64" | "int32" | "float16" | "bool";
  readonly data: Float32Array | BigInt64Array | Int32Array | Uint16Array | Uint8Array;
  readonly dims: readonly number[];
}

/** One ONNX Runtime inference session, platform-neutral. */
export interface Session {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** Runs the graph; `fetches` limits which outputs are computed and returned (default: all). */
  run(
    feeds: Readonly<Record<string, PlainTensor>>,
    fetches?: readonly string[],
    options?: RunOptions,
  ): Promise<Record<string, PlainTensor>>;
  release(): Promise<void>;
}

/** How a caller will treat one run's tensors. */
export interface RunOptions {
  /**
   * The caller never writes into nor transfers the feeds it passes or the outputs it gets, now or later, so a
   * memoised session may keep and hand back those very arrays instead of copies (see `memoSession`).
   */
  readonly borrow?: boolean;
  /**
   * `false`: the graph is run for real, and a memoised session neither answers from nor adds to its memory, nor
   * counts the run toward its hit rate (a warm-up's made-up inputs, which must leave the memo as it was).
   */
  readonly memo?: boolean;
}

export interface SessionOptions {
  /** A label for error messages (the file name). */
  readonly name: string;
}

/** The part of an ONNX Runtime `Tensor` that `wrapOrtSession` reads back. */
export interface OrtTensorLike {
  readonly type: string;
  readonly data: unknown;
  readonly dims: readonly number[];
}

/** The part of an ONNX Runtime session (onnxruntime-node or -web: the same API) that `wrapOrtSession` uses. */
export interface OrtSessionLike<T extends OrtTensorLike> {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, T>, fetches: string[]): Promise<Record<string, T>>;
  run(feeds: Record<string, T>): Promise<Record<string, T>>;
  release(): Promise<void>;
}

/**
 * Wraps an ONNX Runtime session as the core's `Session`: feeds the graph does
 * not take are dropped, plain tensors become the build's own `Tensor` through
 * `toOrt`, and its outputs are read back as plain tensors.
 *
 * @example
 * wrapOrtSession(await ort.InferenceSession.create(bytes), (t) => new ort.Tensor(t.type, t.data, t.dims))
 */
export function wrapOrtSession<T extends OrtTensorLike>(
  session: OrtSessionLike<T>,
  toOrt: (t: PlainTensor) => T,
): Session {
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    async run(feeds, fetches) {
      const ortFeeds: Record<string, T> = {};
      for (const [name, t] of Object.entries(feeds)) if (session.inputNames.includes(name)) ortFeeds[name] = toOrt(t);
      const out = fetches ? await session.run(ortFeeds, [...fetches]) : await session.run(ortFeeds);
      const result: Record<string, PlainTensor> = {};
      for (const [name, t] of Object.entries(out))
        result[name] = { type: t.type as PlainTensor["type"], data: t.data as PlainTensor["data"], dims: t.dims };
      return result;
    },
    release: () => session.release(),
  };
}

/** Creates a session from model bytes. */
export type SessionFactory = (bytes: Uint8Array, options: SessionOptions) => Promise<Session>;

/**
 * Reads one model file by its path relative to the model folder
 * (`"config.json"`, `"onnx/decoder_model_merged.onnx"`). Rejects with a
 * `MissingFileError` when the file does not exist. A source that can list
 * its files (a folder, dropped files) says so with `list`, so finding a
 * model's files reads nothing.
 */
export interface FileSource {
  (path: string): Promise<Uint8Array>;
  /** Every file path under the model folder, relative to it (`"onnx/model.onnx"`). */
  list?(): Promise<readonly string[]>;
}

/** Thrown by a `FileSource` for a file that is not there. */
export class MissingFileError extends Error {
  override readonly name = "MissingFileError";
  constructor(
    readonly path: string,
    where: string,
  ) {
    super(`model file '${path}' not found in ${where}`);
  }
}

/** Reads a JSON file through a `FileSource`, with the file name in any parse error. */
export async function readJson<T = Record<string, unknown>>(files: FileSource, path: string): Promise<T> {
  const bytes = await files(path);
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    const start = JSON.stringify(text.slice(0, 40));
    throw new Error(`${path} is not valid JSON (starts with ${start}): ${(error as Error).message}`, { cause: error });
  }
}

/** A float32 tensor. */
export function f32(data: Float32Array, dims: readonly number[]): PlainTensor {
  return { type: "float32", data, dims };
}

/** An int64 tensor from numbers. */
export function i64(values: ArrayLike<number>, dims: readonly number[]): PlainTensor {
  const data = new BigInt64Array(values.length);
  for (let i = 0; i < values.length; i++) data[i] = BigInt(values[i]!);
  return { type: "int64", data, dims };
}

/** A tensor's data as float32 (converting from half precision if needed). */
export function asFloat32(tensor: PlainTensor): Float32Array {
  if (tensor.data instanceof Float32Array) return tensor.data;
  if (tensor.type === "float16") {
    const half = tensor.data as Uint16Array;
    const out = new Float32Array(half.length);
    for (let i = 0; i < half.length; i++) out[i] = halfToFloat(half[i]!);
    return out;
  }
  throw new Error(`expected a float tensor, got ${tensor.type}`);
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}
