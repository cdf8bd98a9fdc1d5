import { describe, expect, it } from "vitest";
import type { ModelInput } from "../src/core/model.ts";
import { REPO_ROOT } from "../src/models/load.node.ts";
import { loadOrtModel } from "../src/models/ort-model.ts";
import { nodeFiles, nodeSessions } from "../src/models/ort-session.node.ts";
import { memoSessions, type MemoSession } from "../src/models/session-memo.ts";
import { warmUp, warmUpInput, type Warmable } from "./warm-up.ts";

/** A model whose every call takes `ms` of a clock the test moves; it records what it was asked. */
function clockedModel(image: boolean, ms = 10, fail?: number) {
  let time = 0;
  const asked: { input: ModelInput; options: unknown }[] = [];
  let inFlight = 0;
  let overlapped = false;
  const model: Warmable = {
    spec: { modalities: new Set(image ? ["text", "image"] : ["text"]) },
    async generate(input, options) {
      if (inFlight++) overlapped = true;
      asked.push({ input, options });
      await Promise.resolve();
      time += ms;
      inFlight--;
      if (fail !== undefined && asked.length > fail) throw new Error("cannot");
      return "no";
    },
  };
  return {
    model,
    asked,
    now: () => time,
    busy: () => inFlight > 0,
    overlapped: () => overlapped,
  };
}

describe("warmUp", () => {
  it("runs made-up calls until its budget is spent, one at a time, none memoised", async () => {
    const m = clockedModel(true);
    const report = await warmUp(m.model, { budgetMs: 55, now: m.now, pause: () => Promise.resolve() }).done;
    expect(report).toEqual({ calls: 6, ms: 60, stopped: "budget" });
    expect(m.overlapped()).toBe(false);
    expect(m.asked.every((a) => (a.options as { memo?: boolean }).memo === false)).toBe(true);
    // Every input differs (no call repeats another), and each carries an image with the image token.
    const keys = m.asked.map(
      (a) =>
        `${a.input.prompt}|${JSON.stringify(Array.from((a.input.image as { data: Uint8ClampedArray }).data.slice(0, 8)))}`,
    );
    expect(new Set(keys).size).toBe(6);
    expect(m.asked.every((a) => a.input.prompt.startsWith("<image> "))).toBe(true);
  });

  it("stops when asked: stop() resolves once the call in flight returned, and no call starts after it", async () => {
    const m = clockedModel(false);
    const warm = warmUp(m.model, { budgetMs: 10_000, now: m.now, pause: () => new Promise((r) => setTimeout(r, 0)) });
    while (m.asked.length < 3) await new Promise((r) => setTimeout(r, 0));
    const report = await warm.stop();
    expect(m.busy()).toBe(false);
    const calls = m.asked.length;
    await new Promise((r) => setTimeout(r, 20));
    expect(m.asked.length).toBe(calls);
    expect(report.stopped).toBe("asked");
    expect(report.calls).toBe(calls);
    // A text model gets text: no image, no image token.
    expect(m.asked.every((a) => a.input.image === undefined && !a.input.prompt.includes("<image>"))).toBe(true);
  });

  it("cancels the call in flight: stop() does not wait for a made-up call to finish", async () => {
    let started = 0;
    const slow: Warmable = {
      spec: { modalities: new Set(["text"]) },
      // A call that ends only when cancelled, as a generation ends at its next step once its signal is aborted.
      generate: (_input, { signal }) =>
        new Promise((_, reject) => {
          started++;
          signal.addEventListener("abort", () => reject(new Error("generation cancelled")));
        }),
    };
    const warm = warmUp(slow, { budgetMs: 60_000 });
    while (started === 0) await new Promise((r) => setTimeout(r, 0));
    expect(await warm.stop()).toMatchObject({ calls: 0, stopped: "asked" });
    expect(started).toBe(1);
  });

  it("gives up at the first call the model refuses, and refuses a budget that is not a duration", async () => {
    const m = clockedModel(true, 10, 2);
    expect(await warmUp(m.model, { now: m.now, pause: () => Promise.resolve() }).done).toMatchObject({
      calls: 2,
      stopped: "failed",
    });
    expect(() => warmUp(m.model, { budgetMs: Number.NaN })).toThrow("warmUp(): budgetMs must be ≥ 0 ms, got NaN");
  });

  it("warms the bundled tiny VLM on onnxruntime: its made-up inputs are answered, and its memos are left alone", async () => {
    const memos: MemoSession[] = [];
    const memoised = memoSessions(nodeSessions);
    const model = await loadOrtModel(
      nodeFiles(`${REPO_ROOT}models/tiny-vlm`),
      async (bytes, options) => {
        const session = await memoised(bytes, options);
        if ("memo" in session) memos.push(session as MemoSession);
        return session;
      },
      { key: "tiny-vlm" },
    );
    try {
      expect(memos.length).toBeGreaterThan(0);
      const report = await warmUp(model, { budgetMs: 300 }).done;
      expect(report).toMatchObject({ stopped: "budget" });
      expect(report.calls).toBeGreaterThan(0);
      // Nothing kept, nothing counted: the first real call starts the memos as a load leaves them.
      for (const memo of memos) expect(memo.memo()).toEqual({ runs: 0, hits: 0, bytes: 0, entries: 0, off: false });
      expect(await model.generate(warmUpInput(0, true), { maxNewTokens: 3 })).toEqual(expect.any(String));
      expect(memos.some((m) => m.memo().runs > 0)).toBe(true);
    } finally {
      await model.dispose();
    }
  });
});
