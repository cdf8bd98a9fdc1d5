/**
 * Writes a build's service worker: `src/ui/offline/sw.ts` compiled to one classic script (every browser
 * runs it; module service workers are not everywhere yet), preceded by the build's precache manifest, to
 * `<outDir>/sw.js`. Called by vite.config.ts after every other file of the build is written (the
 * precompressed twins included, which the manifest leaves out).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";
import { listSpecs } from "../../models/specs/index.ts";
import { precacheManifest, type PrecacheManifest } from "./precache.ts";

const SOURCE = fileURLToPath(new URL("./sw.ts", import.meta.url));
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

/** Every file under `dir`, as paths relative to it with forward slashes. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).replaceAll("\\", "/"));
}

let compiled: Promise<string> | undefined;

/** sw.ts and what it imports, bundled and minified into one IIFE (compiled once per process). */
function compileServiceWorker(): Promise<string> {
  compiled ??= (async () => {
    const result = await build({
      configFile: false,
      logLevel: "silent",
      publicDir: false,
      build: {
        write: false,
        minify: true,
        target: "es2022",
        lib: { entry: SOURCE, formats: ["iife"], name: "evalrxServiceWorker", fileName: () => "sw.js" },
      },
    });
    const outputs = (Array.isArray(result) ? result : [result]) as { output: { type: string; code?: string }[] }[];
    const chunk = outputs.flatMap((o) => o.output).find((o) => o.type === "chunk");
    if (!chunk?.code) throw new Error("building the service worker (src/ui/offline/sw.ts) produced no script");
    return chunk.code;
  })();
  return compiled;
}

/**
 * The precache manifest of the build in `outDir` (what `sw.js` will keep).
 *
 * @example buildManifest("dist", "0.1.0").entries.length // 151
 */
export function buildManifest(outDir: string, appVersion: string): PrecacheManifest {
  const files = filesUnder(outDir).map((path) => {
    const bytes = readFileSync(join(outDir, path));
    return { path, bytes: statSync(join(outDir, path)).size, hash: sha256(bytes) };
  });
  // The bundled models are the model folders the app loads by itself; other folders are kept when first used.
  const appModels = listSpecs().map((spec) => spec.source.replace(/^models\//, ""));
  return precacheManifest(files, appVersion, sha256, appModels);
}

/**
 * Writes `<outDir>/sw.js` for the build in `outDir` and returns its manifest.
 *
 * @example const { version } = await writeServiceWorker("dist", "0.1.0"); // version: 16 hex digits
 */
export async function writeServiceWorker(outDir: string, appVersion: string): Promise<PrecacheManifest> {
  const manifest = buildManifest(outDir, appVersion);
  const script = await compileServiceWorker();
  writeFileSync(join(outDir, "sw.js"), `const __EVALRX_PRECACHE__ = ${JSON.stringify(manifest)};\n${script}`);
  return manifest;
}
