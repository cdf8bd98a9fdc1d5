import { constants, type Stats } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { basename, isAbsolute, join, relative, sep } from "node:path";
import { decode as decodeJpeg } from "jpeg-js";
import type { ImagePixels } from "../core/index.ts";
import { imageRefPath, MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS } from "../datasets/images.ts";

/** A file a dataset names that may not be read: outside its folder, not a regular file, too large. */
export class RefusedFileError extends Error {
  override readonly name = "RefusedFileError";
}

/** What a non-regular file is, for the message that refuses it. */
function kindOf(info: Stats): string {
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a FIFO (named pipe)";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device file";
  if (info.isSocket()) return "a socket";
  return "not a regular file";
}

/**
 * Reads a file a dataset names, confined to `root` (the dataset's folder, or
 * a root the user named): the reference must be a relative path that stays
 * inside it (see `imageRefPath`), every link on the way is resolved and must
 * land inside it too, and the file must be a regular file no larger than
 * `maxBytes` — checked on the opened file before a byte is read, and opened
 * without blocking, so a FIFO or a device can neither hang nor flood the
 * reader. Returns undefined when there is no such file; throws a
 * `RefusedFileError` with the reason otherwise.
 *
 * @example await readConfined("data/pope", "images/scene-1.png") // Uint8Array
 */
export async function readConfined(
  root: string,
  ref: string,
  options: { readonly maxBytes?: number } = {},
): Promise<Uint8Array | undefined> {
  const maxBytes = options.maxBytes ?? MAX_IMAGE_BYTES;
  const path = imageRefPath(ref);
  if ("reason" in path) throw new RefusedFileError(path.reason);
  const base = await realpath(root);
  let real: string;
  try {
    real = await realpath(join(base, ...path.segments));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    if (code === "ELOOP") throw new RefusedFileError(`'${ref}' is a loop of symbolic links`);
    throw new RefusedFileError(`'${ref}' cannot be read: ${(error as Error).message}`);
  }
  if (real !== base && !real.startsWith(base + sep))
    throw new RefusedFileError(`'${ref}' is a link that leads out of the dataset's folder (to ${real})`);
  let handle;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: the resolved path is not swapped for a link.
    handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new RefusedFileError(`'${ref}' cannot be opened: ${(error as Error).message}`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new RefusedFileError(`'${ref}' is ${kindOf(info)}, not an image file`);
    if (info.size > maxBytes)
      throw new RefusedFileError(`'${ref}' is ${info.size} bytes, over the ${maxBytes}-byte limit for one image`);
    // Read the size seen and no more (a file still growing is refused), never an unbounded stream.
    const bytes = new Uint8Array(info.size);
    let got = 0;
    while (got < bytes.length) {
      const { bytesRead } = await handle.read(bytes, got, bytes.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    const { bytesRead: more } = await handle.read(new Uint8Array(1), 0, 1, got);
    if (more > 0) throw new RefusedFileError(`'${ref}' grew while it was read`);
    return got === bytes.length ? bytes : bytes.slice(0, got);
  } finally {
    await handle.close();
  }
}

/**
 * A dataset image reader for the CLI: `ref` read from inside `root`
 * ({@link readConfined}); a missing file is an error naming it.
 *
 * @example const read = confinedReader("public/demo"); await read("images/scene-0001.png")
 */
export function confinedReader(root: string): (ref: string) => Promise<Uint8Array> {
  return async (ref) => {
    const bytes = await readConfined(root, ref);
    if (!bytes) throw new RefusedFileError(`image not found: '${ref}' (paths are relative to ${root})`);
    return bytes;
  };
}

/**
 * Reads a file the user named (a dataset, a config, a run file) whole, after
 * checking on the opened file that it is a regular file: a FIFO, a device or
 * a directory is refused by name instead of hanging or flooding the reader.
 *
 * @example await readRegularFile("public/demo/pope.jsonl", "dataset 'pope.jsonl'")
 */
export async function readRegularFile(path: string, what: string): Promise<Uint8Array> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new Error(`${what}: no such file (${path})`, { cause: error });
    throw new Error(`${what}: cannot open ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new RefusedFileError(`${what}: ${path} is ${kindOf(info)}, not a file`);
    return new Uint8Array(await handle.readFile());
  } catch (error) {
    if (error instanceof RefusedFileError) throw error;
    throw new Error(`${what}: cannot read ${path}: ${(error as Error).message}`, { cause: error });
  } finally {
    await handle.close();
  }
}

/**
 * A path as a report or run record may carry it, so a shared file leaks no
 * local folder: relative to the working folder when inside it, else its name.
 *
 * @example portablePath("/home/me/evals/models/tiny") // "models/tiny" when run from /home/me/evals
 */
export function portablePath(path: string): string {
  if (!isAbsolute(path)) return path.split(sep).join("/");
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel.split(sep).join("/") : basename(path);
}

/**
 * An image file's bytes as the model runtime takes them: PNG as its bytes
 * (the runtime decodes it itself), JPEG decoded here to RGBA pixels (the page
 * decodes JPEGs with a canvas; under Node this pure-JS decoder does), bounded
 * by `MAX_IMAGE_PIXELS`. Anything else is passed on, for the runtime to refuse by name.
 *
 * @example modelImage(bytesOfAJpeg) // { width: 640, height: 480, data: Uint8Array(1228800) }
 */
export function modelImage(bytes: Uint8Array): Uint8Array | ImagePixels {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return bytes;
  const { width, height, data } = decodeJpeg(bytes, {
    useTArray: true,
    formatAsRGBA: true,
    maxResolutionInMP: MAX_IMAGE_PIXELS / 1e6,
  });
  return { width, height, data };
}
