import { defaultClientConditions, type Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { playwright } from "@vitest/browser-playwright";
import { spawn } from "node:child_process";
import { createReadStream, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { brotliCompressSync, constants as zlibConstants, gzipSync } from "node:zlib";
import { dirname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { chromiumPath, chromiumArgs } from "./src/node/chromium.mjs";
import { writeServiceWorker } from "./src/ui/offline/build-sw.node.ts";

/** ONNX Runtime Web's files the app ships (see `onnxRuntimeAssets`). */
const ORT_FILES = [
  "ort-wasm-simd-threaded.mjs",
  "ort-wasm-simd-threaded.wasm",
  "ort-wasm-simd-threaded.asyncify.mjs",
  "ort-wasm-simd-threaded.asyncify.wasm",
];
/** The installed `onnxruntime-web`'s dist folder (the one transformers.js depends on too). */
const ORT_DIST = dirname(createRequire(import.meta.url).resolve("onnxruntime-web"));

/**
 * The folder the wasm runtime is served from, named by a hash of its files (`ort/<12 hex>/`): a name whose
 * bytes never change, so it is sent `immutable`, a returning page reads it from the HTTP cache without asking,
 * and Chromium reuses the machine code it compiled for it the last time (its wasm code cache is keyed by the
 * URL and needs the response to come from the HTTP cache, not revalidated).
 */
const ORT_DIR = (() => {
  const hash = createHash("sha256");
  for (const name of ORT_FILES) hash.update(name).update(readFileSync(join(ORT_DIST, name)));
  return `ort/${hash.digest("hex").slice(0, 12)}/`;
})();

/**
 * ONNX Runtime Web's wasm runtime, served by the app itself under `/ort/<hash>/` (`ORT_DIR`) from the one
 * installed `onnxruntime-web`. Two builds go into a production build: the plain one (`onnxruntime-web/wasm`,
 * what our runtime runs on the CPU) and the asyncify one (`onnxruntime-web/webgpu`: WebGPU, and
 * transformers.js).
 */
function onnxRuntimeAssets(): Plugin {
  return {
    name: "evalrx:onnxruntime-assets",
    configureServer(server) {
      server.middlewares.use(`/${ORT_DIR}`, (req, res, next) => {
        const name = (req.url ?? "").split("?")[0]!.replace(/^\//, "");
        const file = join(ORT_DIST, name);
        if (!ORT_FILES.includes(name)) return next();
        res.setHeader("Content-Type", name.endsWith(".wasm") ? "application/wasm" : "text/javascript");
        res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
        // Raw middlewares run before Vite adds server.headers: the threaded build's worker script needs COEP itself.
        for (const [key, value] of Object.entries(isolation)) res.setHeader(key, value);
        createReadStream(file).pipe(res);
      });
    },
    generateBundle() {
      for (const name of ORT_FILES)
        this.emitFile({ type: "asset", fileName: `${ORT_DIR}${name}`, source: readFileSync(join(ORT_DIST, name)) });
    },
  };
}

/** The model files served and shipped: configs, tokenizers, graphs, model cards. */
const SHIPPED_MODEL_FILE = /\.(json|onnx|md|txt)$/;

/**
 * The bundled models (`models/<name>/…`, not in public/) served under
 * `/models/` in dev and copied into the build. Missing files answer 404, never
 * index.html: a fallback page would poison transformers.js's cache.
 */
function bundledModels(): Plugin {
  const root = join(dirname(fileURLToPath(import.meta.url)), "models");
  const shipped = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) return shipped(rel);
      return SHIPPED_MODEL_FILE.test(entry.name) ? [rel] : [];
    });
  const modelDirs = () =>
    existsSync(root)
      ? readdirSync(root, { withFileTypes: true })
          .filter((d) => d.isDirectory() && existsSync(join(root, d.name, "config.json")))
          .map((d) => d.name)
      : [];
  return {
    name: "evalrx:bundled-models",
    configureServer(server) {
      server.middlewares.use("/models/", (req, res, next) => {
        // Module imports of the config JSON (`?import`, or fetched as a script) are Vite's to transform.
        const query = (req.url ?? "").split("?")[1] ?? "";
        if (/(^|&)(import|url|raw)\b/.test(query) || /script|worker/.test(String(req.headers["sec-fetch-dest"] ?? "")))
          return next();
        const path = decodeURIComponent((req.url ?? "").split("?")[0]!).replace(/^\/+/, "");
        const file = normalize(join(root, path));
        // A model folder is one with a config.json (as in `modelDirs`), checked without listing models/ per request.
        const servable =
          file.startsWith(root + sep) &&
          !path.split("/").includes("..") &&
          existsSync(join(root, path.split("/")[0]!, "config.json"));
        if (!servable || !existsSync(file) || !statSync(file).isFile() || !SHIPPED_MODEL_FILE.test(file)) {
          res.statusCode = 404;
          res.setHeader("Content-Type", "text/plain");
          res.end(`no model file ${path}`);
          return;
        }
        res.setHeader("Content-Type", file.endsWith(".json") ? "application/json" : "application/octet-stream");
        for (const [key, value] of Object.entries(isolation)) res.setHeader(key, value);
        createReadStream(file).pipe(res);
      });
    },
    configurePreviewServer(server) {
      // `vite preview` would answer a missing file with index.html: 404 instead.
      server.middlewares.use("/models/", (req, res, next) => {
        const path = decodeURIComponent((req.url ?? "").split("?")[0]!).replace(/^\/+/, "");
        const file = resolve(server.config.root, server.config.build.outDir, "models", path);
        if (!path.split("/").includes("..") && existsSync(file) && statSync(file).isFile()) return next();
        res.statusCode = 404;
        res.end(`no model file ${path}`);
      });
    },
    generateBundle() {
      for (const dir of modelDirs())
        for (const rel of shipped(dir))
          this.emitFile({ type: "asset", fileName: `models/${rel}`, source: readFileSync(join(root, rel)) });
    },
  };
}

/**
 * Node-side reference runs for browser tests (`commands.nodeModelRun` in
 * Vitest browser mode): runs the same request through onnxruntime-node in a
 * child process, so Chromium results can be compared with Node's.
 */
function nodeModelRun(_context: unknown, request: unknown): Promise<unknown> {
  return new Promise((resolvePromise, reject) => {
    const script = fileURLToPath(new URL("./src/models/bench/node-reference.node.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", script], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`node reference run exited with ${code}`));
      try {
        resolvePromise(JSON.parse(out));
      } catch (error) {
        reject(new Error(`node reference run printed no JSON: ${out.slice(0, 200)}`, { cause: error }));
      }
    });
    child.stdin.end(JSON.stringify(request));
  });
}

/** Cross-origin isolation, so ONNX Runtime Web may use threads (SharedArrayBuffer). */
const isolation = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
};

/**
 * The built app's Content Security Policy: scripts only from the app itself (no inline script, no eval;
 * WebAssembly compiles for ONNX Runtime), connections only to the app, the Hugging Face hub (and its file
 * CDN) and the loopback companion, images only from the app and from data:/blob: URLs the page made. Sent
 * by `vite preview` (`npm start`) as a header, and written into the built index.html as a <meta> so a
 * static host that sends no headers still enforces it (a <meta> cannot set frame-ancestors).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self' blob:",
  "connect-src 'self' https://huggingface.co https://*.huggingface.co https://*.hf.co http://127.0.0.1:* http://localhost:*",
  "img-src 'self' data: blob:",
  // Svelte's style: directives and the figures set style attributes; styles cannot run code.
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/**
 * The sandbox worker's policy (workers/sandbox.worker.ts runs the analysis code an agent wrote): it alone may turn
 * strings into code, and it may connect nowhere, start no worker and load scripts only from the app. A dedicated
 * worker takes its policy from its own script's response, never from the page's, so `vite preview` sends this one
 * with that file (a static host that sends the app's policy as a header needs the same exception: see README).
 */
export const SANDBOX_CONTENT_SECURITY_POLICY = ["default-src 'none'", "script-src 'self' 'unsafe-eval'"].join("; ");

/** The built sandbox worker's path (Vite names a worker `assets/<file name>-<hash>.js`). */
const SANDBOX_WORKER = /^assets\/sandbox\.worker-[^/]*\.js$/;

/**
 * Has `vite preview` send the sandbox worker with its own policy: whichever later middleware answers the request
 * (the precompressed delivery, or Vite's static files with the app's headers), its policy header becomes this one.
 */
function sandboxWorkerPolicy(): Plugin {
  return {
    name: "evalrx:sandbox-worker-policy",
    configurePreviewServer(server) {
      server.middlewares.use((req, res, next) => {
        const path = decodeURIComponent((req.url ?? "").split("?")[0]!).replace(/^\/+/, "");
        if (SANDBOX_WORKER.test(path)) {
          const setHeader = res.setHeader.bind(res);
          res.setHeader = (name, value) =>
            setHeader(name, name.toLowerCase() === "content-security-policy" ? SANDBOX_CONTENT_SECURITY_POLICY : value);
          res.setHeader("Content-Security-Policy", SANDBOX_CONTENT_SECURITY_POLICY);
        }
        next();
      });
    },
  };
}

/** Writes the CSP into the built index.html (not the dev server's: Vite's client injects inline scripts). */
function contentSecurityPolicy(): Plugin {
  return {
    name: "evalrx:content-security-policy",
    apply: "build",
    transformIndexHtml: () => [
      {
        tag: "meta",
        attrs: { "http-equiv": "Content-Security-Policy", content: CONTENT_SECURITY_POLICY },
        injectTo: "head-prepend",
      },
    ],
  };
}

/**
 * Built files worth compressing ahead of time: the wasm runtime and the bundled models (megabytes each), and
 * the app's own chunks (3 MB of JavaScript, a quarter of that compressed).
 */
const PRECOMPRESSED = /^(ort\/.*\.(wasm|mjs)|models\/.*\.(onnx|json)|assets\/.*\.(js|css))$/;
/** Built files named by a hash of their bytes (Vite's `assets/`, the wasm runtime's `ort/<hash>/`): sent `immutable`. */
const IMMUTABLE = /^(assets|ort\/[0-9a-f]{12})\//;
const CONTENT_TYPES: Record<string, string> = {
  wasm: "application/wasm",
  mjs: "text/javascript",
  js: "text/javascript",
  css: "text/css",
  onnx: "application/octet-stream",
  json: "application/json",
};

/**
 * Brotli settings per built file: quality 4 for most (fast builds), and for the wasm runtime, most of what a
 * first visit transfers, quality 5 with a 16 MB window (the file whole in view): 3.08 → 2.87 MB for the CPU
 * build and 5.55 → 4.98 MB for the WebGPU one, for ~15 s more build time (quality 11 would take minutes).
 */
function brotliParams(name: string, bytes: Uint8Array): Record<number, number> {
  const wasm = name.endsWith(".wasm");
  return {
    [zlibConstants.BROTLI_PARAM_QUALITY]: wasm ? 5 : 4,
    ...(wasm ? { [zlibConstants.BROTLI_PARAM_LGWIN]: 24, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: bytes.length } : {}),
  };
}

/**
 * Delivery: writes `.br` and `.gz` beside every built wasm and model file (once, at build time), and has
 * `vite preview` answer a request for one with the precompressed file and its `Content-Encoding`, an ETag
 * (so a second visit gets 304s), and `Cache-Control: immutable` for Vite's hashed `assets/` and the wasm runtime's hashed folder. A static host
 * does the same with its own precompressed-file setting (see README, Serving the app elsewhere).
 */
function precompressedDelivery(): Plugin {
  let outDir = "dist";
  return {
    name: "evalrx:precompressed-delivery",
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    writeBundle(_options, bundle) {
      for (const name of Object.keys(bundle)) {
        if (!PRECOMPRESSED.test(name)) continue;
        const bytes = readFileSync(join(outDir, name));
        if (bytes.length < 1024) continue;
        writeFileSync(join(outDir, `${name}.gz`), gzipSync(bytes, { level: 6 }));
        writeFileSync(join(outDir, `${name}.br`), brotliCompressSync(bytes, { params: brotliParams(name, bytes) }));
      }
    },
    configurePreviewServer(server) {
      const root = resolve(server.config.root, server.config.build.outDir);
      server.middlewares.use((req, res, next) => {
        const path = decodeURIComponent((req.url ?? "").split("?")[0]!).replace(/^\/+/, "");
        if (IMMUTABLE.test(path)) res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
        if (!PRECOMPRESSED.test(path) || path.split("/").includes("..")) return next();
        const accepts = String(req.headers["accept-encoding"] ?? "");
        const encoding = /\bbr\b/.test(accepts) ? "br" : /\bgzip\b/.test(accepts) ? "gzip" : undefined;
        const file = join(root, path);
        const packed = encoding && `${file}.${encoding === "br" ? "br" : "gz"}`;
        if (!packed || !existsSync(packed) || !existsSync(file)) return next();
        const stat = statSync(packed);
        const etag = `"${encoding}-${stat.size.toString(36)}-${stat.mtimeMs.toString(36)}"`;
        for (const [key, value] of Object.entries(isolation)) res.setHeader(key, value);
        res.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
        res.setHeader("Vary", "Accept-Encoding");
        res.setHeader("ETag", etag);
        // Hashed assets and the hashed wasm folder never change under their name; the rest is revalidated (304).
        if (!IMMUTABLE.test(path)) res.setHeader("Cache-Control", "no-cache");
        if (req.headers["if-none-match"] === etag) {
          res.statusCode = 304;
          res.end();
          return;
        }
        res.setHeader("Content-Type", CONTENT_TYPES[path.split(".").pop()!] ?? "application/octet-stream");
        res.setHeader("Content-Encoding", encoding);
        res.setHeader("Content-Length", String(stat.size));
        createReadStream(packed).pipe(res);
      });
    },
  };
}

/**
 * The service worker (src/ui/offline/sw.ts): written as `sw.js` after every other file of the build, with
 * the build's precache manifest (each file's path, size and hash), so the app starts and runs offline after
 * one visit and updates without mixing builds. `vite preview` sends it with `Cache-Control: no-cache` (the
 * page registers it with `updateViaCache: "none"` as well), so a new build is found on the next visit.
 */
function serviceWorker(): Plugin {
  let outDir = "dist";
  return {
    name: "evalrx:service-worker",
    apply: "build",
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    async closeBundle(error?: Error) {
      // A failed build reports its own error; there is no build to keep.
      if (error || !existsSync(join(outDir, "index.html"))) return;
      await writeServiceWorker(outDir, packageVersion);
    },
  };
}

const packageVersion = (
  JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string }
).version;

export default defineConfig({
  plugins: [
    svelte(),
    onnxRuntimeAssets(),
    bundledModels(),
    contentSecurityPolicy(),
    sandboxWorkerPolicy(),
    precompressedDelivery(),
    serviceWorker(),
  ],
  define: { __EVALRX_VERSION__: JSON.stringify(packageVersion), __EVALRX_ORT_DIR__: JSON.stringify(ORT_DIR) },
  server: { host: "localhost", headers: isolation },
  preview: {
    host: "localhost",
    headers: { ...isolation, "Content-Security-Policy": `${CONTENT_SECURITY_POLICY}; frame-ancestors 'none'` },
  },
  // The extern-wasm build of onnxruntime-web does not make the bundler copy its wasm: `/ort/` serves it.
  resolve: { conditions: ["onnxruntime-web-use-extern-wasm", ...defaultClientConditions] },
  worker: { format: "es" },
  optimizeDeps: {
    exclude: ["onnxruntime-web", "@huggingface/transformers"],
    // Pre-bundled up front: a dependency first met mid-run makes Vite re-optimise and reload the page,
    // which fails whichever browser test is running on a fresh cache (as in CI).
    include: [
      "comlink",
      "idb",
      "d3-array",
      "d3-format",
      "d3-scale",
      "d3-scale-chromatic",
      "d3-shape",
      "papaparse",
      "hyparquet",
      "fast-png",
      "jpeg-js",
      "fflate",
      "fzstd",
      "valibot",
      "@noble/hashes/sha2.js",
      "@noble/hashes/utils.js",
      "@huggingface/tokenizers",
      "pure-rand/generator/xoroshiro128plus",
      "pure-rand/distribution/uniformFloat64",
      "pure-rand/distribution/uniformInt",
      "@stdlib/stats-base-dists-normal-cdf",
      "@stdlib/stats-base-dists-normal-quantile",
      "@stdlib/stats-base-dists-t-cdf",
      "@stdlib/stats-base-dists-t-quantile",
      "@stdlib/stats-base-dists-binomial-cdf",
      "@stdlib/math-base-special-gammaln",
      "@stdlib/math-base-special-gammainc",
      "@stdlib/math-base-special-betaln",
      "@stdlib/math-base-special-betainc",
    ],
  },
  build: { target: "es2023", chunkSizeWarningLimit: 4096 },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "node",
          environment: "node",
          include: ["src/**/*.test.ts", "workers/**/*.test.ts", "models/**/*.test.ts"],
          exclude: ["**/*.browser.test.ts", "**/*.e2e.test.ts", "**/node_modules/**"],
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        // Node-side tests that drive the built app in the system Chromium through playwright-core.
        test: {
          name: "e2e",
          environment: "node",
          include: ["src/**/*.e2e.test.ts"],
          globalSetup: ["src/node/e2e-build.ts"],
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          name: "browser",
          include: ["src/**/*.browser.test.ts", "workers/**/*.browser.test.ts"],
          testTimeout: 120_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({
              launchOptions: { executablePath: chromiumPath() ?? "/usr/bin/chromium", args: chromiumArgs },
            }),
            instances: [{ browser: "chromium" }],
            commands: { nodeModelRun },
          },
        },
      },
    ],
  },
});
