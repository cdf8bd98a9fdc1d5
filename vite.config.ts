import { defaultClientConditions, type Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { playwright } from "@vitest/browser-playwright";
import { createReadStream, existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { chromiumPath, chromiumArgs } from "./src/node/chromium.mjs";

/**
 * ONNX Runtime Web's wasm runtime, served by the app itself under `/ort/`
 * from the one installed `onnxruntime-web` (the version transformers.js
 * depends on). Only the build both transformers.js and our runtime use
 * (`onnxruntime-web/webgpu` = the asyncify build) goes into a production build.
 */
function onnxRuntimeAssets(): Plugin {
  const require = createRequire(import.meta.url);
  const dist = dirname(require.resolve("onnxruntime-web")); // …/onnxruntime-web/dist
  const shipped = ["ort-wasm-simd-threaded.asyncify.mjs", "ort-wasm-simd-threaded.asyncify.wasm"];
  return {
    name: "evalrx:onnxruntime-assets",
    configureServer(server) {
      server.middlewares.use("/ort/", (req, res, next) => {
        const name = (req.url ?? "").split("?")[0]!.replace(/^\//, "");
        const file = join(dist, name);
        if (!/^ort-wasm[\w.-]*\.(wasm|mjs)$/.test(name) || !existsSync(file)) return next();
        res.setHeader("Content-Type", name.endsWith(".wasm") ? "application/wasm" : "text/javascript");
        createReadStream(file).pipe(res);
      });
    },
    generateBundle() {
      for (const name of shipped) {
        this.emitFile({ type: "asset", fileName: `ort/${name}`, source: readFileSync(join(dist, name)) });
      }
    },
  };
}

/** Cross-origin isolation, so ONNX Runtime Web may use threads (SharedArrayBuffer). */
const isolation = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
};

export default defineConfig({
  plugins: [svelte(), onnxRuntimeAssets()],
  server: { host: "localhost", headers: isolation },
  preview: { host: "localhost", headers: isolation },
  // The extern-wasm build of onnxruntime-web does not make the bundler copy its wasm: `/ort/` serves it.
  resolve: { conditions: ["onnxruntime-web-use-extern-wasm", ...defaultClientConditions] },
  worker: { format: "es" },
  optimizeDeps: { exclude: ["onnxruntime-web", "@huggingface/transformers"] },
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
          },
        },
      },
    ],
  },
});
