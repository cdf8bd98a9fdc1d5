/**
 * Bundles: a run or a report as one file to send — a ZIP (fflate) holding a
 * small manifest, the JSON, and the images as files of their own (not
 * base64 inside the JSON). What a link cannot carry, a bundle does: every
 * case, every image.
 *
 * Reading one is untrusted input: the file's size is bounded before it is
 * opened, each entry is unpacked in small steps and stopped at its bound
 * (so a ZIP bomb costs no more than the bound), only the names a bundle
 * holds are accepted, each image must hash to its name, and the JSON is
 * checked against its schema (`checkRunFile`, `validateReport`).
 */
import { strToU8, Unzip, UnzipInflate, zipSync, type Zippable } from "fflate";
import { checkRunFile } from "../evals/run-file.ts";
import type { Report } from "../report/schema.ts";
import { fromBase64, sha256Hex, toBase64 } from "../store/codec.ts";
import type { RunExport } from "../store/types.ts";
import { ShareError } from "./errors.ts";
import { checkReport } from "./payload.ts";

export const BUNDLE_FORMAT = "evalrx-bundle";
export const BUNDLE_VERSION = 1;
/** The manifest's name inside the ZIP. */
export const BUNDLE_MANIFEST = "evalrx-bundle.json";
/** The file name ending a bundle gets (a ZIP: any unzip tool opens it). */
export const BUNDLE_EXTENSION = ".evalrx.zip";

/** How large a bundle may be, and what its entries may unpack to. */
export interface BundleLimits {
  /** The bundle file itself (default 512 MiB). */
  readonly fileBytes: number;
  /** One JSON entry, unpacked (default 512 MiB: a 100k-case run with its dataset is ~40 MB). */
  readonly jsonBytes: number;
  /** One image, unpacked (default 32 MiB). */
  readonly imageBytes: number;
  /** Everything, unpacked (default 1 GiB). */
  readonly totalBytes: number;
}

export const BUNDLE_LIMITS: BundleLimits = {
  fileBytes: 512 * 2 ** 20,
  jsonBytes: 512 * 2 ** 20,
  imageBytes: 32 * 2 ** 20,
  totalBytes: 2 ** 30,
};

/** A bundle's content: a run file (images in `run.images`, as the store imports them) or a report. */
export type BundleContent =
  { readonly kind: "run"; readonly run: RunExport } | { readonly kind: "report"; readonly report: Report };

const IMAGE_EXT: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/bmp": "bmp",
};
const EXT_TYPE = Object.fromEntries(Object.entries(IMAGE_EXT).map(([type, ext]) => [ext, type]));
const IMAGE_NAME = /^images\/([0-9a-f]{64})\.(png|jpg|gif|webp|bmp)$/;

const json = (value: unknown) => strToU8(JSON.stringify(value));

/**
 * A bundle file of a run (its images written as files) or a report.
 *
 * @example writeBundle({ kind: "run", run: exported }) // Uint8Array (a ZIP: evalrx-bundle.json, run.json, images/…)
 */
export function writeBundle(content: BundleContent, createdAt = new Date().toISOString()): Uint8Array {
  const files: Zippable = {
    [BUNDLE_MANIFEST]: json({ format: BUNDLE_FORMAT, version: BUNDLE_VERSION, kind: content.kind, createdAt }),
  };
  if (content.kind === "report") {
    files["report.json"] = json(content.report);
  } else {
    const { images = [], ...run } = content.run;
    files["run.json"] = json(run);
    for (const image of images) {
      const ext = IMAGE_EXT[image.type];
      if (!ext)
        throw new TypeError(`writeBundle(): image ${image.hash} is ${image.type}, not a PNG, JPEG, GIF, WebP or BMP`);
      const hex = image.hash.replace(/^sha256:/, "");
      // Images are compressed already: stored, not deflated again.
      files[`images/${hex}.${ext}`] = [fromBase64(image.base64), { level: 0 }];
    }
  }
  return zipSync(files, { level: 6 });
}

/** Unpacks every entry of a ZIP, each bounded, in 16 KiB steps so no single step can unpack more than ~16 MiB. */
function unpack(bytes: Uint8Array, limits: BundleLimits): Map<string, Uint8Array> {
  const entries = new Map<string, Uint8Array[]>();
  const sizes = new Map<string, number>();
  let total = 0;
  let refusal: ShareError | undefined;
  const unzip = new Unzip();
  unzip.register(UnzipInflate);
  unzip.onfile = (file) => {
    if (refusal) return;
    const name = file.name;
    const allowed = name === BUNDLE_MANIFEST || name === "run.json" || name === "report.json" || IMAGE_NAME.test(name);
    if (!allowed) {
      refusal = new ShareError(
        "schema",
        `the bundle holds ${JSON.stringify(name.slice(0, 200))}, which a bundle never does (it holds ${BUNDLE_MANIFEST}, run.json or report.json, and images/<sha256>.<png|jpg|gif|webp|bmp>)`,
      );
      return;
    }
    if (entries.has(name)) {
      refusal = new ShareError("schema", `the bundle holds ${name} twice`);
      return;
    }
    const bound = name.startsWith("images/") ? limits.imageBytes : limits.jsonBytes;
    entries.set(name, []);
    sizes.set(name, 0);
    file.ondata = (error, chunk) => {
      if (refusal) return;
      if (error) {
        refusal = new ShareError(
          "corrupt",
          `the bundle's ${name} does not unpack (${error.message}): the file is damaged`,
        );
        return;
      }
      const size = sizes.get(name)! + chunk.length;
      total += chunk.length;
      sizes.set(name, size);
      if (size > bound || total > limits.totalBytes) {
        refusal = new ShareError(
          "too-large-unpacked",
          `the bundle's ${name} unpacks to more than ${(size > bound ? bound : limits.totalBytes).toLocaleString("en")} bytes${size > bound ? ", the most such a file may be" : " in all, the most a bundle may hold"}: the file is damaged or made to exhaust memory (a ZIP bomb), and was not read`,
        );
        file.terminate();
        return;
      }
      entries.get(name)!.push(chunk);
    };
    try {
      file.start();
    } catch (error) {
      refusal = new ShareError(
        "corrupt",
        `the bundle's ${name} uses compression method ${file.compression}, which a bundle does not (${(error as Error).message})`,
      );
    }
  };
  try {
    for (let at = 0; at < bytes.length && !refusal; at += 16 * 1024)
      unzip.push(bytes.subarray(at, Math.min(at + 16 * 1024, bytes.length)), at + 16 * 1024 >= bytes.length);
  } catch (error) {
    if (!refusal)
      refusal = new ShareError("corrupt", `the bundle is not a readable ZIP file (${(error as Error).message})`, {
        cause: error,
      });
  }
  if (refusal) throw refusal;
  const out = new Map<string, Uint8Array>();
  for (const [name, chunks] of entries) {
    const size = sizes.get(name)!;
    const joined = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      joined.set(c, at);
      at += c.length;
    }
    out.set(name, joined);
  }
  return out;
}

function parseJson(bytes: Uint8Array, name: string): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    // The parser's message quotes the text; nothing of a refused file is shown, so it is not repeated.
    throw new ShareError("not-json", `the bundle's ${name} is not JSON (or not UTF-8 text)`, { cause: error });
  }
}

/**
 * What a bundle file holds, checked whole before anything is kept: the ZIP
 * (size, names, bounded unpacking), the manifest, every image against its
 * hash, and the run (`checkRunFile`) or report (`validateReport`). Throws a
 * `ShareError` naming the entry and what is wrong.
 *
 * @example readBundle(new Uint8Array(await file.arrayBuffer())) // { kind: "run", run: { format: "evalrx-run", … } }
 */
export function readBundle(bytes: Uint8Array, limits: BundleLimits = BUNDLE_LIMITS): BundleContent {
  if (bytes.length > limits.fileBytes)
    throw new ShareError(
      "too-long",
      `the bundle is ${bytes.length.toLocaleString("en")} bytes; bundles up to ${limits.fileBytes.toLocaleString("en")} bytes are read`,
    );
  if (bytes.length < 4 || bytes[0] !== 0x50 || bytes[1] !== 0x4b)
    throw new ShareError(
      "corrupt",
      "this is not a bundle: a bundle is a ZIP file (it starts with PK), this file does not",
    );
  const entries = unpack(bytes, limits);
  const manifestBytes = entries.get(BUNDLE_MANIFEST);
  if (!manifestBytes) throw new ShareError("schema", `the ZIP has no ${BUNDLE_MANIFEST}: it is not an EvalRx bundle`);
  const manifest = parseJson(manifestBytes, BUNDLE_MANIFEST) as Record<string, unknown> | null;
  if (!manifest || typeof manifest !== "object" || manifest["format"] !== BUNDLE_FORMAT)
    throw new ShareError(
      "schema",
      `${BUNDLE_MANIFEST} does not say format "${BUNDLE_FORMAT}": it is not an EvalRx bundle`,
    );
  if (manifest["version"] !== BUNDLE_VERSION)
    throw new ShareError(
      "version",
      `this bundle is version ${JSON.stringify(manifest["version"])}; this EvalRx reads version ${BUNDLE_VERSION}`,
    );
  if (manifest["kind"] === "report") {
    const raw = entries.get("report.json");
    if (!raw) throw new ShareError("schema", "the bundle says it holds a report, but has no report.json");
    return { kind: "report", report: checkReport(parseJson(raw, "report.json")) };
  }
  if (manifest["kind"] !== "run")
    throw new ShareError(
      "schema",
      `${BUNDLE_MANIFEST} says kind ${JSON.stringify(manifest["kind"])}; expected "run" or "report"`,
    );
  const raw = entries.get("run.json");
  if (!raw) throw new ShareError("schema", "the bundle says it holds a run, but has no run.json");
  const data = parseJson(raw, "run.json") as Record<string, unknown>;
  const images: { hash: string; type: string; base64: string }[] = [];
  for (const [name, image] of entries) {
    const m = IMAGE_NAME.exec(name);
    if (!m) continue;
    const actual = sha256Hex(image);
    if (actual !== m[1])
      throw new ShareError(
        "corrupt",
        `the bundle's ${name} does not hash to its name (its bytes hash to ${actual}): the file is damaged`,
      );
    images.push({ hash: `sha256:${m[1]}`, type: EXT_TYPE[m[2]!]!, base64: toBase64(image) });
  }
  let run: RunExport;
  try {
    run = checkRunFile(
      data && typeof data === "object" ? { ...data, ...(images.length ? { images } : {}) } : data,
      "the bundle's run.json",
    ).data;
  } catch (error) {
    throw new ShareError("schema", (error as Error).message, { cause: error });
  }
  return { kind: "run", run };
}
