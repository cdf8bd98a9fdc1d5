/**
 * Vitest `globalSetup` of the e2e project: builds the app once, before any
 * e2e file runs, and names the folder in `EVALRX_APP_DIR`, so every
 * `startBrowserHarness()` serves the same build instead of building its own
 * (one build, not one per file, on CI's two cores).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "vite";

export default async function setup(): Promise<() => void> {
  const outDir = mkdtempSync(join(tmpdir(), "evalrx-e2e-app-"));
  await build({ logLevel: "warn", build: { outDir, emptyOutDir: true } });
  process.env["EVALRX_APP_DIR"] = outDir;
  return () => rmSync(outDir, { recursive: true, force: true });
}
