import { MAX_IMAGE_BYTES } from "./images.ts";
import type { ImageSource } from "./types.ts";

/**
 * Where do a dropped dataset's image paths point? Given the files dropped
 * (or picked) together with the dataset, returns an `ImageSource` that reads
 * `images/red.png` from the file whose relative path (a dropped folder's
 * `webkitRelativePath`, minus the dataset's own folder) or, failing that, whose
 * name matches. Pass `put` to store each image once (the store's `putImage`).
 *
 * @example importDataset(dataset.stream(), { name: dataset.name, images: droppedImages(files, dataset) })
 */
export function droppedImages(
  files: Iterable<File>,
  dataset?: File,
  put?: (bytes: Uint8Array, type: string) => Promise<unknown>,
): ImageSource {
  const base = folderOf(dataset?.webkitRelativePath ?? "");
  const byPath = new Map<string, File>();
  const byName = new Map<string, File>();
  for (const file of files) {
    const path = file.webkitRelativePath || file.name;
    byPath.set(normalize(path.startsWith(base) ? path.slice(base.length) : path), file);
    if (!byName.has(file.name)) byName.set(file.name, file);
  }
  return {
    async read(ref: string) {
      const key = normalize(ref);
      const file = byPath.get(key) ?? byName.get(key.split("/").pop() ?? key);
      if (file && file.size > MAX_IMAGE_BYTES)
        throw new Error(`'${ref}' is ${file.size} bytes, over the ${MAX_IMAGE_BYTES}-byte limit for one image`);
      return file ? new Uint8Array(await file.arrayBuffer()) : undefined;
    },
    ...(put && {
      async put(_hash: string, bytes: Uint8Array, type: string) {
        await put(bytes, type);
      },
    }),
  };
}

function folderOf(path: string): string {
  const at = path.lastIndexOf("/");
  return at < 0 ? "" : path.slice(0, at + 1);
}

/** `./a/../b/c.png` → `b/c.png`. */
function normalize(path: string): string {
  const out: string[] = [];
  for (const part of path.replace(/\\/g, "/").split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return out.join("/");
}
