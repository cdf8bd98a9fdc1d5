import { createServer, type Server } from "node:http";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AutoModelForCausalLM, AutoTokenizer, env, type Tensor } from "@huggingface/transformers";
import { CapabilityError } from "../core/capability.ts";
import { apiBackend, compose, ortBackend } from "./backends.ts";
import { loadModel, REPO_ROOT } from "./load.node.ts";
import { gqaDecoder, gqaDecoderConfig } from "./fixtures/gqa-decoder.ts";
import { nodeFiles, nodeSessions } from "./ort-session.node.ts";
import type { FileSource, SessionFactory } from "./session.ts";
import { getSpec, inferSpec } from "./specs/index.ts";

const gptConfig = () =>
  JSON.parse(readFileSync(`${REPO_ROOT}src/models/fixtures/layouts/lm-merged/config.json`, "utf8")) as Record<
    string,
    unknown
  >;
import { transformersBackend } from "./transformers-backend.ts";
import { attentionTapCache } from "./transformers-tap.ts";

const vlmSpec = getSpec("tiny-vlm")!;
const lmSpec = getSpec("tiny-lm")!;
const demoCases = readFileSync(`${REPO_ROOT}public/demo/pope.jsonl`, "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as { id: string; input: { prompt: string; image: string } });
const image = (path: string) => new Uint8Array(readFileSync(`${REPO_ROOT}public/demo/${path}`));

/** A file source that counts every file requested. */
function counting(folder: string): { files: FileSource; requested: string[] } {
  const requested: string[] = [];
  const inner = nodeFiles(folder);
  return { requested, files: (path) => (requested.push(path), inner(path)) };
}

describe("compose", () => {
  it("refuses attention from the api backend before any model file is requested", async () => {
    const { files, requested } = counting(`${REPO_ROOT}models/tiny-vlm`);
    let fetched = 0;
    const backend = apiBackend({ baseUrl: "http://127.0.0.1:9", fetch: async () => (fetched++, new Response("{}")) });
    await expect(compose(vlmSpec, backend, { want: ["generate", "attention"] })).rejects.toThrow(CapabilityError);
    await expect(compose(vlmSpec, backend, { want: ["attention_write"] })).rejects.toThrow(
      /cannot provide 'attention_write'/,
    );
    expect(requested).toEqual([]);
    expect(fetched).toBe(0);
    // The white-box backend provides it, and only then are files read.
    const ort = ortBackend({ sessions: nodeSessions, filesFor: () => files });
    const model = await compose(vlmSpec, ort, { want: ["attention", "attention_write", "image"] });
    expect(requested).toContain("onnx/decoder_model_merged.onnx");
    await model.dispose();
  });

  it("an inferred spec is negotiated from the graph: refused before any session is created, with the reason", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-compose-"));
    try {
      const folder = join(dir, "gqa-smooth");
      const sizes = {
        layers: 1,
        hidden: 32,
        heads: 2,
        kvHeads: 1,
        vocab: 16,
        maxPositions: 32,
        attributes: { smooth_softmax: 1 },
      };
      mkdirSync(join(folder, "onnx"), { recursive: true });
      for (const f of ["tokenizer.json", "tokenizer_config.json"])
        copyFileSync(`${REPO_ROOT}models/tiny-lm/${f}`, join(folder, f));
      writeFileSync(join(folder, "config.json"), JSON.stringify(gqaDecoderConfig(sizes)));
      writeFileSync(join(folder, "onnx/model.onnx"), gqaDecoder(sizes));
      const spec = inferSpec("gqa-smooth", folder, gqaDecoderConfig(sizes));
      expect(spec.capabilities.has("attention")).toBe(false); // the config alone cannot tell
      let created = 0;
      const counting: SessionFactory = (bytes, options) => (created++, nodeSessions(bytes, options));
      const ort = ortBackend({ sessions: counting, filesFor: () => nodeFiles(folder) });
      await expect(compose(spec, ort, { want: ["attention"] })).rejects.toThrow(CapabilityError);
      await expect(compose(spec, ort, { want: ["attention"] })).rejects.toThrow(
        /GroupQueryAttention '.*' \(main graph\) was not decomposed: not decomposed: smooth_softmax.*what to do: re-export/,
      );
      expect(created).toBe(0);
      const model = await compose(spec, ort, { want: ["generate"] });
      expect(model.capabilities.has("attention")).toBe(false);
      await model.dispose();
      // A readable inferred model is negotiated the same way, and granted.
      const lm = inferSpec("plain-lm", `${REPO_ROOT}src/models/fixtures/layouts/lm-merged`, gptConfig());
      const merged = ortBackend({ sessions: nodeSessions, filesFor: (s) => nodeFiles(s.source) });
      const m = await compose(lm, merged, { want: ["attention", "attention_write", "generate"] });
      await m.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the api backend (OpenAI-compatible chat completions)", () => {
  let server: Server;
  let baseUrl: string;
  const bodies: Record<string, unknown>[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = "";
      req.on("data", (chunk) => (raw += chunk));
      req.on("end", () => {
        if (req.url !== "/v1/chat/completions" || req.method !== "POST") {
          res.writeHead(404).end("no such route");
          return;
        }
        const body = JSON.parse(raw) as { messages: { content: unknown }[]; model: string };
        bodies.push(body);
        if (body.model === "broken") {
          res.writeHead(500).end("the model crashed");
          return;
        }
        const content = body.messages[0]!.content;
        const hasImage = Array.isArray(content) && content.some((c: { type: string }) => c.type === "image_url");
        res.setHeader("Content-Type", "application/json");
        res.end(
          JSON.stringify({ choices: [{ message: { role: "assistant", content: hasImage ? " yes " : "text only" } }] }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("sends text and images and reads the answer; it cannot read internals", async () => {
    const model = await compose(vlmSpec, apiBackend({ baseUrl, model: "served-vlm" }), { want: ["generate", "image"] });
    const c = demoCases[0]!;
    expect(await model.generate({ prompt: c.input.prompt, image: image(c.input.image) }, { maxNewTokens: 4 })).toBe(
      "yes",
    );
    const sent = bodies.at(-1) as {
      model: string;
      max_tokens: number;
      messages: { content: { type: string; text?: string; image_url?: { url: string } }[] }[];
    };
    expect(sent.model).toBe("served-vlm");
    expect(sent.max_tokens).toBe(4);
    const parts = sent.messages[0]!.content;
    expect(parts.find((p) => p.type === "text")!.text).not.toContain("<image>");
    expect(parts.find((p) => p.type === "image_url")!.image_url!.url).toMatch(/^data:image\/png;base64,iVBOR/);
    expect(await model.generate({ prompt: "hello" })).toBe("text only");
    await expect(model.forward({ prompt: "hello" }, { reductions: ["sinkMass"] })).rejects.toThrow(CapabilityError);
  });

  it("reports a failing endpoint with its status", async () => {
    const model = await compose(lmSpec, apiBackend({ baseUrl, model: "broken" }));
    await expect(model.generate({ prompt: "hi" })).rejects.toThrow(/answered 500: the model crashed/);
  });
});

describe("transformers.js on the bundled folders, local files only", () => {
  beforeAll(() => {
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = `${REPO_ROOT}models/`;
  });

  it("generates the same greedy tokens as our runtime (tiny-vlm, demo cases)", async () => {
    const ours = await loadModel("tiny-vlm");
    const theirs = await transformersBackend({ modelId: (s) => s.key }).load(vlmSpec);
    // A spread of demo cases: every split, yes and no.
    for (const c of demoCases.filter((_, i) => i % 75 === 0)) {
      const input = { prompt: c.input.prompt, image: image(c.input.image) };
      const a = await ours.generateTokens(input, { maxNewTokens: 8 });
      const b = await theirs.generateIds(input, { maxNewTokens: 8 });
      expect(a.ids, c.id).toEqual(b);
    }
    await Promise.all([ours.dispose(), theirs.dispose()]);
  });

  it("generates the same greedy tokens as our runtime (tiny-lm)", async () => {
    const ours = await loadModel("tiny-lm");
    const theirs = await transformersBackend({ modelId: (s) => s.key }).load(lmSpec);
    const prompts = readFileSync(`${REPO_ROOT}public/demo/tiny-lm.jsonl`, "utf8")
      .trim()
      .split("\n")
      .filter((_, i) => i % 40 === 0)
      .map((line) => (JSON.parse(line) as { input: { prompt: string } }).input.prompt);
    for (const prompt of prompts) {
      const a = await ours.generateTokens({ prompt }, { maxNewTokens: 12 });
      expect(a.ids, prompt).toEqual(await theirs.generateIds({ prompt }, { maxNewTokens: 12 }));
    }
    await Promise.all([ours.dispose(), theirs.dispose()]);
  });
});

describe("the graph tap under transformers.js", () => {
  let dir: string;
  beforeAll(() => {
    // A model folder whose decoder does not export attention: tiny-lm with its untapped graph as model.onnx.
    dir = mkdtempSync(join(tmpdir(), "evalrx-tap-"));
    cpSync(`${REPO_ROOT}models/tiny-lm`, join(dir, "plain-lm"), { recursive: true });
    copyFileSync(join(dir, "plain-lm/onnx/model_untapped.onnx"), join(dir, "plain-lm/onnx/model.onnx"));
  });
  afterAll(() => {
    env.useCustomCache = false;
    env.customCache = null;
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves transformers.js a tapped decoder whose attention equals the exported one (1e-5)", async () => {
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = `${dir}/`;
    const cache = attentionTapCache(async (key) => {
      try {
        return new Uint8Array(readFileSync(key));
      } catch {
        return undefined;
      }
    });
    env.useCustomCache = true;
    env.customCache = cache;
    const tokenizer = await AutoTokenizer.from_pretrained("plain-lm");
    const model = await AutoModelForCausalLM.from_pretrained("plain-lm", { dtype: "fp32" });
    expect([...cache.tapped.values()]).toEqual([lmSpec.layers]);
    const prompt = "3 1 4 1 5";
    const out = (await model(tokenizer(prompt))) as Record<string, Tensor>;
    const ours = await loadModel("tiny-lm");
    const trace = await ours.forward({ prompt }, { reductions: ["fullAttention"] });
    const full = trace.reductions.fullAttention!;
    const size = full.data.length / lmSpec.layers;
    for (let l = 0; l < lmSpec.layers; l++) {
      const theirs = out[`attentions.${l}`]!.data as Float32Array;
      expect(theirs.length).toBe(size);
      const mine = full.data.subarray(l * size, (l + 1) * size);
      expect(theirs.reduce((m, v, i) => Math.max(m, Math.abs(v - mine[i]!)), 0)).toBeLessThanOrEqual(1e-5);
    }
    await Promise.all([ours.dispose(), model.dispose()]);
  });
});
