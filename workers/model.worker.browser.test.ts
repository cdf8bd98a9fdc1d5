import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commands } from "vitest/browser";
import { ModelClient, startModelClient, WorkerDiedError } from "../src/ui/runtime.ts";
import {
  compareDemoResults,
  demoDifferences,
  runDemoCases,
  type DemoInput,
  type DemoResult,
  type DemoRunner,
} from "../src/models/demo-run.ts";
import type { Progress } from "../src/core/model.ts";

declare module "vitest/browser" {
  interface BrowserCommands {
    nodeModelRun(request: { model: string; cases: DemoInput[]; maxNewTokens?: number }): Promise<DemoResult[]>;
  }
}

const readDemo = async (path: string) => new Uint8Array(await (await fetch(`/demo/${path}`)).arrayBuffer());

async function demoCases(every: number): Promise<DemoInput[]> {
  const text = await (await fetch("/demo/pope.jsonl")).text();
  return text
    .trim()
    .split("\n")
    .filter((_, i) => i % every === 0)
    .map((line) => {
      const c = JSON.parse(line) as { id: string; input: { prompt: string; image: string } };
      return { id: c.id, prompt: c.input.prompt, image: c.input.image };
    });
}

function runner(client: ModelClient): DemoRunner {
  return {
    generateTokens: (input, options) =>
      client.call((api) => api.generate(input, { maxNewTokens: options?.maxNewTokens ?? 8 })),
    forward: (input, capture) => client.call((api) => api.forward(input, capture)),
  };
}

describe("the model worker on WASM", () => {
  let client: ModelClient;
  beforeAll(() => {
    client = startModelClient();
  });
  afterAll(() => client.terminate());

  it("loads the bundled tiny-vlm from the app's /models/ with progress, and says which engine and why", async () => {
    const progress: Progress[] = [];
    const status = await client.load({ kind: "bundled", key: "tiny-vlm" }, { device: "wasm" }, (p) => progress.push(p));
    expect(status.choice).toEqual({ device: "wasm", reason: "WASM was asked for" });
    expect(status.attention).toEqual({ kind: "exported" });
    expect(status.capabilities).toEqual(
      expect.arrayContaining(["attention", "attention_write", "hidden_states", "image"]),
    );
    expect(progress.at(-1)).toMatchObject({ stage: "ready" });
    expect(status.filesRead).toContain("onnx/decoder_model_merged.onnx");
  });

  it("gives the same answers and the same reductions (1e-4) as onnxruntime-node on demo cases", async () => {
    const cases = await demoCases(50);
    const [browser, node] = await Promise.all([
      runDemoCases(runner(client), cases, readDemo),
      commands.nodeModelRun({ model: "tiny-vlm", cases }),
    ]);
    expect(browser.map((r) => r.text)).toEqual(node.map((r) => r.text));
    expect(compareDemoResults(browser, node)).toBeLessThanOrEqual(1e-4);
  });

  it("reports bad input with a clear error and stays usable", async () => {
    await expect(
      client.call((api) => api.generate({ prompt: "<image> is there a red circle ?", image: new Uint8Array(10) })),
    ).rejects.toThrow(/not a PNG/);
    await expect(client.load({ kind: "url", url: "/models/no-such-model/" }, { device: "wasm" })).rejects.toThrow(
      /has no config\.json/,
    );
    const status = await client.load({ kind: "bundled", key: "tiny-lm" }, { device: "wasm" });
    expect(status.key).toBe("tiny-lm");
    expect(
      (await client.call((api) => api.generate({ prompt: "1 2 3" }, { maxNewTokens: 4 }))).ids.length,
    ).toBeGreaterThanOrEqual(0);
  });
});

describe("the model worker with the transformers backend", () => {
  it("loads the bundled tiny-lm through transformers.js from /models/ and generates the same greedy tokens as ort", async () => {
    const client = startModelClient();
    try {
      const prompts = ["3 1 4 1 5", "2 7 1 8", "9 9 0"];
      await client.load({ kind: "bundled", key: "tiny-lm" }, { device: "wasm" });
      const ours = [];
      for (const prompt of prompts)
        ours.push((await client.call((api) => api.generate({ prompt }, { maxNewTokens: 10 }))).ids);
      const status = await client.load(
        { kind: "bundled", key: "tiny-lm" },
        { device: "wasm", backend: "transformers" },
      );
      expect(status.attention.kind).toBe("unreadable");
      expect(status.capabilities).not.toContain("attention");
      for (const [i, prompt] of prompts.entries())
        expect((await client.call((api) => api.generate({ prompt }, { maxNewTokens: 10 }))).ids).toEqual(ours[i]);
      await expect(client.call((api) => api.forward({ prompt: "1 2" }, { reductions: ["sinkMass"] }))).rejects.toThrow(
        /cannot provide 'attention'/,
      );
    } finally {
      client.terminate();
    }
  });
});

describe("the model worker on WebGPU (SwiftShader here)", () => {
  it("gives the same answers as onnxruntime-node on a few demo cases, reductions within 2e-3", async () => {
    const client = startModelClient();
    try {
      const status = await client.load({ kind: "bundled", key: "tiny-vlm" }, { device: "webgpu" });
      expect(status.choice.device).toBe("webgpu");
      const cases = (await demoCases(150)).slice(0, 3);
      const [browser, node] = await Promise.all([
        runDemoCases(runner(client), cases, readDemo),
        commands.nodeModelRun({ model: "tiny-vlm", cases }),
      ]);
      expect(browser.map((r) => r.text)).toEqual(node.map((r) => r.text));
      // SwiftShader's WebGPU float math differs from the CPU's by ~1e-5 per attention probability and
      // ~1e-4 per logit; entropies weigh small probabilities by |log p|, amplifying that to a few 1e-4
      // (measured 2e-4 … 6e-4 on the bundled models). The answers are identical; reductions agree to 2e-3.
      const differences = demoDifferences(browser, node);
      console.log(
        "WebGPU (SwiftShader) vs onnxruntime-node, max abs difference per reduction:",
        JSON.stringify(differences),
      );
      for (const [name, diff] of Object.entries(differences)) expect(diff, name).toBeLessThanOrEqual(2e-3);
    } finally {
      client.terminate();
    }
  }, 360_000); // SwiftShader runs WebGPU on the CPU: minutes on a busy 2-core machine
});

describe("a model worker that dies", () => {
  it("is reported to the page with the reason, and a new one can be started", async () => {
    // A real worker that dies at start the way an out-of-memory worker does: with an uncaught error.
    const source = 'throw new RangeError("Array buffer allocation failed (out of memory)");';
    const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    let first = true;
    const client = new ModelClient(() => {
      if (first) {
        first = false;
        return new Worker(url);
      }
      return new Worker(new URL("./model.worker.ts", import.meta.url), { type: "module" });
    });
    const reasons: string[] = [];
    client.onDeath((reason) => reasons.push(reason));
    await expect(client.load({ kind: "bundled", key: "tiny-lm" })).rejects.toThrow(WorkerDiedError);
    expect(client.deathReason).toMatch(/out of memory/);
    expect(reasons).toHaveLength(1);
    await expect(client.call((api) => api.modelStatus())).rejects.toThrow(/died/);
    client.restart();
    const status = await client.load({ kind: "bundled", key: "tiny-lm" }, { device: "wasm" });
    expect(status.key).toBe("tiny-lm");
    client.terminate();
    URL.revokeObjectURL(url);
  });
});
