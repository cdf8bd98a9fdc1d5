import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { precacheManifest, strategyFor, toDownload, type PrecacheManifest } from "./precache.ts";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const file = (path: string, body = path) => ({ path, bytes: body.length, hash: sha(body) });
const BUILD = [
  file("index.html"),
  file("assets/index-AbCdEf12.js"),
  file("assets/index-AbCdEf12.js.br"),
  file("ort/0123456789ab/ort-wasm-simd-threaded.wasm"),
  file("ort/0123456789ab/ort-wasm-simd-threaded.wasm.gz"),
  file("ort/0123456789ab/ort-wasm-simd-threaded.asyncify.wasm"),
  file("ort/0123456789ab/ort-wasm-simd-threaded.asyncify.mjs"),
  file("ort/0123456789ab/ort-wasm-simd-threaded.jspi.wasm"),
  file("models/tiny-vlm/config.json"),
  file("sw.js"),
];
const ORIGIN = "http://localhost:4173";

describe("precacheManifest", () => {
  it("keeps every built file but the compressed twins and sw.js, sorted, the WebGPU wasm builds marked lazy", () => {
    const m = precacheManifest(BUILD, "0.1.0", sha);
    expect(m.entries.map((e) => e.url)).toEqual([
      "/assets/index-AbCdEf12.js",
      "/index.html",
      "/models/tiny-vlm/config.json",
      "/ort/0123456789ab/ort-wasm-simd-threaded.asyncify.mjs",
      "/ort/0123456789ab/ort-wasm-simd-threaded.asyncify.wasm",
      "/ort/0123456789ab/ort-wasm-simd-threaded.jspi.wasm",
      "/ort/0123456789ab/ort-wasm-simd-threaded.wasm",
    ]);
    expect(m.entries.filter((e) => e.lazy).map((e) => e.url)).toEqual([
      "/ort/0123456789ab/ort-wasm-simd-threaded.asyncify.wasm",
      "/ort/0123456789ab/ort-wasm-simd-threaded.jspi.wasm",
    ]);
    expect(m.entries[1]).toEqual({ url: "/index.html", revision: sha("index.html").slice(0, 16), bytes: 10 });
    expect(m.version).toMatch(/^[0-9a-f]{16}$/);
    expect(m.appVersion).toBe("0.1.0");
  });

  it("marks lazy the model files the app does not load by itself: other folders, and the untapped graphs", () => {
    const build = [
      ...BUILD,
      file("models/tiny-vlm/onnx/decoder_model_merged.onnx"),
      file("models/tiny-vlm/onnx/decoder_untapped.onnx"),
      file("models/planted-vlm/config.json"),
      file("models/planted-vlm/onnx/decoder_model_merged.onnx"),
    ];
    const lazy = (m: PrecacheManifest) =>
      m.entries.filter((e) => e.lazy && e.url.startsWith("/models/")).map((e) => e.url);
    expect(lazy(precacheManifest(build, "0.1.0", sha, ["tiny-vlm", "tiny-lm"]))).toEqual([
      "/models/planted-vlm/config.json",
      "/models/planted-vlm/onnx/decoder_model_merged.onnx",
      "/models/tiny-vlm/onnx/decoder_untapped.onnx",
    ]);
    // Without the app's model list every folder is the app's; the untapped copies stay lazy.
    expect(lazy(precacheManifest(build, "0.1.0", sha))).toEqual(["/models/tiny-vlm/onnx/decoder_untapped.onnx"]);
    expect(() => precacheManifest(build, "0.1.0", sha, ["models/tiny-vlm"])).toThrow(
      'precacheManifest: appModels must be model folder names, got ["models/tiny-vlm"]',
    );
  });

  it("names a build by its files: the same files give the same version, one changed byte another", () => {
    const a = precacheManifest(BUILD, "0.1.0", sha);
    expect(precacheManifest([...BUILD].reverse(), "0.1.0", sha).version).toBe(a.version);
    const edited = BUILD.map((f) => (f.path === "index.html" ? file("index.html", "index.html!") : f));
    expect(precacheManifest(edited, "0.1.0", sha).version).not.toBe(a.version);
  });

  it("refuses a path outside the build, a file without a hash, and a build without index.html", () => {
    expect(() => precacheManifest([...BUILD, file("../etc/passwd")], "0.1.0", sha)).toThrow(
      "precacheManifest: '../etc/passwd' is not a path inside the build",
    );
    expect(() => precacheManifest([{ path: "a.js", bytes: 1, hash: "nope" }], "0.1.0", sha)).toThrow(
      "precacheManifest: 'a.js' has no hex hash (got 'nope')",
    );
    expect(() => precacheManifest([file("a.js")], "0.1.0", sha)).toThrow(
      "precacheManifest: the build has no index.html, so the app could not start offline",
    );
  });
});

describe("strategyFor", () => {
  const m = precacheManifest(BUILD, "0.1.0", sha);
  const byUrl = new Map(m.entries.map((e) => [e.url, e]));
  const kind = (url: string, mode = "cors", method = "GET") => strategyFor({ url, mode, method }, byUrl, ORIGIN).kind;

  it("answers the app's page loads with the shell, and its built files from the precache", () => {
    expect(kind(`${ORIGIN}/#/runs/x`, "navigate")).toBe("shell");
    expect(kind(`${ORIGIN}/index.html`, "navigate")).toBe("shell");
    expect(kind(`${ORIGIN}/ort/0123456789ab/ort-wasm-simd-threaded.asyncify.mjs`)).toBe("precache");
    expect(kind(`${ORIGIN}/models/tiny-vlm/config.json`)).toBe("precache");
  });

  it("sends the runtime's wasm under its hashed folder through the browser's own fetch (its compiled code kept)", () => {
    expect(kind(`${ORIGIN}/ort/0123456789ab/ort-wasm-simd-threaded.wasm`)).toBe("compiled");
    expect(kind(`${ORIGIN}/ort/0123456789ab/ort-wasm-simd-threaded.asyncify.wasm`)).toBe("compiled");
    // A size asked for comes from the kept copy as for any built file; a wasm outside a hashed folder is kept as any.
    expect(kind(`${ORIGIN}/ort/0123456789ab/ort-wasm-simd-threaded.wasm`, "cors", "HEAD")).toBe("precache");
    const flat = precacheManifest([file("index.html"), file("ort/ort-wasm-simd-threaded.wasm")], "0.1.0", sha);
    const flatUrls = new Map(flat.entries.map((e) => [e.url, e]));
    expect(
      strategyFor({ url: `${ORIGIN}/ort/ort-wasm-simd-threaded.wasm`, mode: "cors", method: "GET" }, flatUrls, ORIGIN)
        .kind,
    ).toBe("precache");
  });

  it("answers a HEAD for a built file from the precache too (sizes asked offline), and leaves other HEADs alone", () => {
    expect(kind(`${ORIGIN}/models/tiny-vlm/config.json`, "cors", "HEAD")).toBe("precache");
    expect(kind(`${ORIGIN}/models/tiny-vlm/generation_config.json`, "cors", "HEAD")).toBe("missing");
    expect(kind(`${ORIGIN}/served/my-model/config.json`, "cors", "HEAD")).toBe("network");
  });

  it("sends a file the build's own folders do not have to the server, 404 when offline (a probe for an optional model file)", () => {
    expect(kind(`${ORIGIN}/models/tiny-vlm/generation_config.json`)).toBe("missing");
    expect(kind(`${ORIGIN}/assets/index-Old00000.js`)).toBe("missing");
  });

  it("keeps served model files (network first), and leaves the hub, POSTs and other files alone", () => {
    expect(kind("http://127.0.0.1:8000/my-model/onnx/model.onnx")).toBe("runtime");
    expect(kind(`${ORIGIN}/served/my-model/config.json`)).toBe("runtime");
    expect(kind("https://huggingface.co/owner/name/resolve/main/config.json")).toBe("network");
    expect(kind("https://huggingface.co/api/models/owner/name")).toBe("network");
    expect(kind(`${ORIGIN}/ort/0123456789ab/ort-wasm-simd-threaded.wasm`, "cors", "POST")).toBe("network");
    expect(kind("http://127.0.0.1:7777/jobs")).toBe("network");
    expect(kind("data:text/plain,hi")).toBe("network");
    expect(kind(`${ORIGIN}/elsewhere.html`, "navigate")).toBe("network");
  });
});

describe("toDownload", () => {
  it("downloads only what no older build kept with the same bytes, and never a lazy file", () => {
    const a = precacheManifest(BUILD, "0.1.0", sha);
    const changed = BUILD.map((f) => (f.path === "index.html" ? file("index.html", "new shell") : f));
    const b: PrecacheManifest = precacheManifest([...changed, file("assets/extra-12345678.js")], "0.1.0", sha);
    const { download, reuse } = toDownload(b, [a]);
    expect(download.map((e) => e.url)).toEqual(["/assets/extra-12345678.js", "/index.html"]);
    expect(reuse.map((r) => r.entry.url)).toContain("/ort/0123456789ab/ort-wasm-simd-threaded.wasm");
    expect(reuse.every((r) => r.from === a.version)).toBe(true);
    expect(toDownload(a, []).download.map((e) => e.url)).not.toContain(
      "/ort/0123456789ab/ort-wasm-simd-threaded.jspi.wasm",
    );
  });
});
