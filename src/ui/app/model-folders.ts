/**
 * Model folders the user added, kept in this browser's Cache Storage (one
 * entry per file, and a manifest written last), so a folder is still listed
 * and loadable after a reload. Not the `Store` (that holds datasets and runs):
 * model files are big blobs read whole by the worker, which Cache Storage
 * streams to and from disk.
 */

/** One kept folder, as its manifest says. */
export interface StoredFolder {
  /** The folder's name, also its model key (`files:<name>`). */
  readonly name: string;
  /** When it was added (ISO 8601). */
  readonly addedAt: string;
  readonly files: readonly { readonly path: string; readonly bytes: number }[];
  readonly bytes: number;
}

export const FOLDER_CACHE = "evalrx-model-folders-v1";

/** The (never fetched) same-origin URLs the files are kept under. */
function root(): string {
  return new URL(`${import.meta.env.BASE_URL}__evalrx/model-folders/`, location.origin).href;
}
const fileKey = (name: string, path: string) => `${root()}${encodeURIComponent(name)}/${path}`;
const manifestKey = (name: string) => `${root()}${encodeURIComponent(name)}.manifest.json`;

/**
 * The folders kept in this browser: add (replacing one of the same name),
 * list, read back as the worker's `files` source, and remove.
 *
 * @example
 * const folders = new ModelFolders();
 * await folders.save("my-model", [{ path: "config.json", file }, …]);
 * const files = await folders.files("my-model"); // Map<path, Blob>, for { kind: "files", key, files }
 */
export class ModelFolders {
  constructor(private readonly cacheName = FOLDER_CACHE) {}

  #open(): Promise<Cache> {
    if (typeof caches === "undefined")
      throw new Error("this browser has no Cache Storage (a private window?): folders cannot be kept across reloads");
    return caches.open(this.cacheName);
  }

  /** Every kept folder, by name. */
  async list(): Promise<StoredFolder[]> {
    const cache = await this.#open();
    const out: StoredFolder[] = [];
    for (const request of await cache.keys()) {
      if (!request.url.startsWith(root()) || !request.url.endsWith(".manifest.json")) continue;
      const response = await cache.match(request);
      try {
        out.push((await response!.json()) as StoredFolder);
      } catch {
        // A manifest that cannot be read names no folder: skip it (the next save of that name replaces it).
      }
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Keeps `files` as folder `name`, replacing a folder of that name. The
   * manifest is written after every file, so a save cut short (full storage,
   * a closed tab) leaves no half folder listed; its files are removed.
   */
  async save(name: string, files: readonly { readonly path: string; readonly file: Blob }[]): Promise<StoredFolder> {
    if (!name.trim()) throw new Error("a model folder needs a name");
    const cache = await this.#open();
    await this.remove(name);
    try {
      for (const { path, file } of files) await cache.put(fileKey(name, path), new Response(file));
      const folder: StoredFolder = {
        name,
        addedAt: new Date().toISOString(),
        files: files.map(({ path, file }) => ({ path, bytes: file.size })),
        bytes: files.reduce((sum, { file }) => sum + file.size, 0),
      };
      await cache.put(
        manifestKey(name),
        new Response(JSON.stringify(folder), { headers: { "Content-Type": "application/json" } }),
      );
      return folder;
    } catch (error) {
      await this.remove(name).catch(() => undefined);
      throw error;
    }
  }

  /** The folder's files as path → Blob (read lazily by the worker); names the file the browser lost, if any. */
  async files(name: string): Promise<Map<string, Blob>> {
    const cache = await this.#open();
    const manifest = await cache.match(manifestKey(name));
    if (!manifest) throw new Error(`no model folder '${name}' is kept in this browser: add the folder again`);
    const folder = (await manifest.json()) as StoredFolder;
    const out = new Map<string, Blob>();
    for (const { path } of folder.files) {
      const response = await cache.match(fileKey(name, path));
      if (!response)
        throw new Error(
          `the kept folder '${name}' lost ${path} (the browser may have evicted it): add the folder again`,
        );
      out.set(path, await response.blob());
    }
    return out;
  }

  /** Forgets a folder and its files (nothing happens when there is none). */
  async remove(name: string): Promise<void> {
    const cache = await this.#open();
    const prefix = `${root()}${encodeURIComponent(name)}/`;
    await cache.delete(manifestKey(name));
    for (const request of await cache.keys()) if (request.url.startsWith(prefix)) await cache.delete(request);
  }
}
