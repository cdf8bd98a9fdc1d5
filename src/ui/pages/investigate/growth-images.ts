/**
 * Object URLs of stored images, by content hash (for cases a report names by hash without carrying their
 * bytes); hashes not in the store are left out. The caller revokes the URLs.
 *
 * @example await storedImageUrls(store, new Set(["sha256:…"])) // Map { "sha256:…" => "blob:…" }
 */
export async function storedImageUrls(
  store: { getImage(hash: string): Promise<{ bytes: Uint8Array; type: string } | undefined> },
  hashes: ReadonlySet<string>,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const hash of hashes) {
    const image = await store.getImage(hash).catch(() => undefined);
    if (image) found.set(hash, URL.createObjectURL(new Blob([image.bytes as BlobPart], { type: image.type })));
  }
  return found;
}
