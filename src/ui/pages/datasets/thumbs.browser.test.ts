import { expect, it } from "vitest";
import type { ImageRecord } from "../../../store/types.ts";
import { ThumbCache } from "./thumbs.ts";
import redUrl from "../../../datasets/fixtures/images/red.png?url";

const ref = (n: number) => `sha256:${String(n).padStart(64, "0")}`;
/** Whether a blob: URL still resolves (a revoked one fails to fetch). */
const alive = (url: string) =>
  fetch(url).then(
    () => true,
    () => false,
  );

it("makes one object URL per stored image, keeps the most recent ones, and revokes the rest", async () => {
  const bytes = new Uint8Array(await (await fetch(redUrl)).arrayBuffer());
  const reads: string[] = [];
  const thumbs = new ThumbCache(async (hash): Promise<ImageRecord | undefined> => {
    reads.push(hash);
    return hash === ref(9) ? undefined : { hash, bytes, type: "image/png" };
  }, 2);
  const first = await thumbs.url(ref(1));
  expect(first).toMatch(/^blob:/);
  expect(await thumbs.url(ref(1))).toBe(first);
  expect(reads).toEqual([ref(1)]);
  const image = new Image();
  image.src = first!;
  await image.decode();
  expect(image.naturalWidth).toBeGreaterThan(0);

  const second = (await thumbs.url(ref(2)))!;
  await thumbs.url(ref(1)); // used again: now the most recent
  const third = (await thumbs.url(ref(3)))!; // evicts 2, the least recently used
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect(thumbs.size).toBe(2);
  expect(await alive(first!)).toBe(true);
  expect(await alive(second)).toBe(false);
  expect(await alive(third)).toBe(true);

  // Not stored, or not a stored image's key: no URL, and nothing is read for a path.
  expect(await thumbs.url(ref(9))).toBeUndefined();
  expect(await thumbs.url("images/red.png")).toBeUndefined();
  expect(reads).not.toContain("images/red.png");

  thumbs.dispose();
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect(await alive(first!)).toBe(false);
  expect(await alive(third)).toBe(false);
  expect(await thumbs.url(ref(1))).toBeUndefined();
});
