import { describe, expect, it } from "vitest";
import type { Model, ModelInput } from "../src/core/model.ts";
import { getSpec } from "../src/models/specs/index.ts";
import type { ModelHelper } from "./model-helper.ts";
import { pooled, SharedCopy, type StartCopy } from "./model-copies.ts";
import { imageAffinityKey } from "./model-pool.ts";

/**
 * A copy that answers with its name and the prompt after a tick: what the sharing is judged by (the real helper is
 * `model-helper.worker.ts`'s, run in Chromium by model-helper.browser.test.ts and the runs and investigate e2e).
 */
function copy(name: string): Model {
  const spec = getSpec("tiny-vlm")!;
  const answer = async (input: ModelInput) => {
    await new Promise((done) => setTimeout(done, 1));
    return `${name}:${input.prompt}`;
  };
  return {
    spec,
    capabilities: spec.capabilities,
    generate: answer,
    forward: () => Promise.reject(new Error("not used")),
    dispose: async () => {},
  };
}

/** A StartCopy that counts its starts and closes, and can kill the helper it started last. */
function starter(fail?: string) {
  const counts = { started: 0, closed: 0 };
  let kill: (reason: string) => void = () => undefined;
  const start: StartCopy = async (onDeath) => {
    counts.started++;
    if (fail) throw new Error(fail);
    kill = onDeath;
    const helper: ModelHelper = { model: copy(`helper${counts.started}`), close: async () => void counts.closed++ };
    return helper;
  };
  return { start, counts, kill: (reason: string) => kill(reason) };
}

const inputs = Array.from({ length: 30 }, (_, i) => ({ prompt: `q${i}` }));
const ask = (model: Model) => Promise.all(inputs.map((input) => model.generate(input)));

describe("SharedCopy and pooled", () => {
  it("starts the helper at the first job, reuses it for the next ones, and closes it with the model", async () => {
    const s = starter();
    const shared = new SharedCopy(s.start);
    expect(s.counts.started).toBe(0); // nothing before a job asks
    const warnings: string[] = [];
    for (const wait of [true, true, false]) {
      const job = await pooled(copy("local"), shared, { callsPerCopy: 2, wait, warn: (m) => warnings.push(m) });
      expect(job.concurrency).toBe(4);
      if (!wait) await shared.get(); // the helper joins when it is ready
      const answers = await ask(job.model);
      expect(answers.map((a) => a.split(":")[1])).toEqual(inputs.map((i) => i.prompt));
      expect(new Set(answers.map((a) => a.split(":")[0]))).toEqual(new Set(["local", "helper1"]));
      job.close();
    }
    expect(s.counts).toEqual({ started: 1, closed: 0 });
    await shared.close();
    expect(s.counts).toEqual({ started: 1, closed: 1 });
    expect(await shared.get()).toEqual({ why: "the model was unloaded" });
    expect(warnings).toEqual([]);
  });

  it("a helper that cannot start leaves the model worker answering alone, says so, and is not tried again", async () => {
    const s = starter("out of memory");
    const shared = new SharedCopy(s.start);
    for (let job = 0; job < 2; job++) {
      const warnings: string[] = [];
      const copies = await pooled(copy("local"), shared, {
        callsPerCopy: 2,
        wait: true,
        warn: (m) => warnings.push(m),
      });
      expect(copies.concurrency).toBe(1);
      expect((await ask(copies.model)).every((a) => a.startsWith("local:"))).toBe(true);
      expect(warnings).toEqual(["no helper model worker (out of memory); the model worker answers alone, more slowly"]);
      copies.close();
    }
    expect(s.counts.started).toBe(1);
  });

  it("a helper that dies is taken out of the running job, which goes on alone; the next job starts another", async () => {
    const s = starter();
    const shared = new SharedCopy(s.start);
    const warnings: string[] = [];
    const job = await pooled(copy("local"), shared, { callsPerCopy: 2, wait: true, warn: (m) => warnings.push(m) });
    s.kill("killed");
    expect((await ask(job.model)).every((a) => a.startsWith("local:"))).toBe(true);
    expect(warnings).toEqual(["the helper model worker stopped (killed); the model worker answers alone, more slowly"]);
    job.close();
    const next = await pooled(copy("local"), shared, { callsPerCopy: 2, wait: true, warn: (m) => warnings.push(m) });
    expect((await ask(next.model)).some((a) => a.startsWith("helper2:"))).toBe(true);
    next.close();
    expect(warnings).toHaveLength(1);
  });
});

it("an eval's key ties every question of one image to one copy (it encodes the image once)", async () => {
  const s = starter();
  const image = (seed: number) => Uint8Array.from({ length: 64 }, (_, i) => (i * 31 + seed * 7) & 0xff);
  const job = await pooled(copy("local"), new SharedCopy(s.start), {
    callsPerCopy: 8,
    wait: true,
    warn: () => undefined,
    keyOf: imageAffinityKey,
  });
  const asked = Array.from({ length: 60 }, (_, i) => ({ prompt: `q${i % 6}`, image: image(Math.floor(i / 6)) }));
  const answers = await Promise.all(asked.map((input) => job.model.generate(input)));
  const copyOf = new Map<number, Set<string>>();
  for (const [i, answer] of answers.entries())
    copyOf.set(Math.floor(i / 6), (copyOf.get(Math.floor(i / 6)) ?? new Set()).add(answer.split(":")[0]!));
  expect([...copyOf.values()].every((copies) => copies.size === 1)).toBe(true);
  expect(new Set([...copyOf.values()].flatMap((c) => [...c]))).toEqual(new Set(["local", "helper1"]));
  job.close();
});
