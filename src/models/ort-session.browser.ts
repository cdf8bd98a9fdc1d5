import * as ort from "onnxruntime-web/webgpu";
import { MissingFileError, wrapOrtSession, type FileSource, type SessionFactory } from "./session.ts";

/**
 * Sessions on onnxruntime-web (the asyncify build transformers.js uses too),
 * on the WebGPU or WASM execution provider. Call `configureOrtWasm()` first so
 * the wasm comes from the app's own `/ort/`.
 *
 * @example
 * const sessions = webSessions("wasm");
 * const session = await sessions(bytes, { name: "onnx/model.onnx" });
 */
export function webSessions(device: "webgpu" | "wasm"): SessionFactory {
  return async (bytes) => {
    const session = await ort.InferenceSession.create(bytes, { executionProviders: [device] });
    return wrapOrtSession(session, (t) => new ort.Tensor(t.type, t.data as never, t.dims));
  };
}

/**
 * Model files fetched from a URL prefix (the app's `/models/<key>/`, or a hub
 * `…/resolve/main/` when online). A 404 — or an HTML page where a model file
 * should be — is a missing file, never a model.
 *
 * @example
 * await fetchFiles("/models/tiny-vlm/")("config.json") // → Uint8Array(…)
 */
export function fetchFiles(base: string, onFetch?: (path: string) => void): FileSource {
  const prefix = base.endsWith("/") ? base : `${base}/`;
  return async (path) => {
    onFetch?.(path);
    const response = await fetch(`${prefix}${path}`);
    const type = response.headers.get("Content-Type") ?? "";
    if (response.status === 404 || (response.ok && type.startsWith("text/html")))
      throw new MissingFileError(path, prefix);
    if (!response.ok) throw new Error(`fetching model file ${prefix}${path} failed: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  };
}

/**
 * Model files from a dropped folder: `<input webkitdirectory>` files (their
 * `webkitRelativePath` starts with the folder name, which is stripped) or a
 * map built from a File System Access directory handle.
 */
export function droppedFiles(files: Iterable<File> | ReadonlyMap<string, Blob>): FileSource {
  const byPath = new Map<string, Blob>();
  if (files instanceof Map) for (const [path, blob] of files) byPath.set(path, blob);
  else
    for (const file of files as Iterable<File>) {
      const rel = file.webkitRelativePath || file.name;
      byPath.set(rel.includes("/") ? rel.slice(rel.indexOf("/") + 1) : rel, file);
    }
  return async (path) => {
    const blob = byPath.get(path);
    if (!blob) throw new MissingFileError(path, "the dropped folder");
    return new Uint8Array(await blob.arrayBuffer());
  };
}

/** Walks a File System Access directory handle into a path → File map (for `droppedFiles`). */
export async function filesOfDirectory(handle: FileSystemDirectoryHandle, prefix = ""): Promise<Map<string, Blob>> {
  const out = new Map<string, Blob>();
  for await (const [name, entry] of (
    handle as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }
  ).entries()) {
    if (entry.kind === "file") out.set(`${prefix}${name}`, await (entry as FileSystemFileHandle).getFile());
    else
      for (const [p, f] of await filesOfDirectory(entry as FileSystemDirectoryHandle, `${prefix}${name}/`))
        out.set(p, f);
  }
  return out;
}
