import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./load.node.ts";
import { buildOnnxModel } from "./onnx-build.ts";
import { DTYPE } from "./onnx-read.ts";
import { nodeSessions } from "./ort-session.node.ts";
import { f32, type PlainTensor } from "./session.ts";
import { hasRandomOps, memoSession, memoSessions } from "./session-memo.ts";

const vision = readFileSync(`${REPO_ROOT}models/tiny-vlm/onnx/vision_encoder.onnx`);
const pixels = (seed: number) =>
  f32(
    Float32Array.from({ length: 3 * 48 * 48 }, (_, i) => ((i * 31 + seed) % 97) / 97),
    [1, 3, 48, 48],
  );

/** y = Relu(x) over a vector of any length. */
const relu = buildOnnxModel({
  opset: 17,
  inputs: [{ name: "x", elemType: DTYPE.float, dims: ["n"] }],
  outputs: [{ name: "y", elemType: DTYPE.float, dims: ["n"] }],
  nodes: [{ opType: "Relu", inputs: ["x"], outputs: ["y"], name: "relu" }],
});
/** y = x + U(0, 1) noise: not a function of x. */
const noisy = buildOnnxModel({
  opset: 17,
  inputs: [{ name: "x", elemType: DTYPE.float, dims: [4] }],
  outputs: [{ name: "y", elemType: DTYPE.float, dims: [4] }],
  nodes: [
    { opType: "RandomUniformLike", inputs: ["x"], outputs: ["u"], name: "noise" },
    { opType: "Add", inputs: ["x", "u"], outputs: ["y"], name: "add" },
  ],
});

const values = (t: PlainTensor | undefined) => Array.from(t!.data as Float32Array);

describe("memoSession", () => {
  it("answers a repeated run of the vision encoder from memory with the outputs a fresh run gives", async () => {
    const plain = await nodeSessions(vision, { name: "vision" });
    const memo = memoSession(await nodeSessions(vision, { name: "vision" }));
    const fresh = await plain.run({ pixel_values: pixels(1) }, ["image_features"]);
    const first = await memo.run({ pixel_values: pixels(1) }, ["image_features"]);
    const again = await memo.run({ pixel_values: pixels(1) }, ["image_features"]);
    expect(values(first.image_features)).toEqual(values(fresh.image_features));
    expect(values(again.image_features)).toEqual(values(fresh.image_features));
    expect(again.image_features!.dims).toEqual(fresh.image_features!.dims);
    expect(memo.memo()).toMatchObject({ runs: 2, hits: 1, entries: 1, off: false });
    // Another image is computed, not answered.
    const other = await memo.run({ pixel_values: pixels(2) }, ["image_features"]);
    expect(values(other.image_features)).not.toEqual(values(fresh.image_features));
    expect(memo.memo()).toMatchObject({ runs: 3, hits: 1, entries: 2 });
    await Promise.all([plain.release(), memo.release()]);
  });

  it("hands out copies: writing into (or transferring) what it returned leaves what it keeps intact", async () => {
    const memo = memoSession(await nodeSessions(relu, { name: "relu" }));
    const x = () => f32(Float32Array.of(-1, 2, -3, 4), [4]);
    const first = await memo.run({ x: x() });
    (first.y!.data as Float32Array).fill(99);
    const second = await memo.run({ x: x() });
    expect(values(second.y)).toEqual([0, 2, 0, 4]);
    (second.y!.data as Float32Array).fill(7);
    expect(values((await memo.run({ x: x() })).y)).toEqual([0, 2, 0, 4]);
    expect(memo.memo().hits).toBe(2);
    await memo.release();
  });

  it("keeps and hands back tensors of mixed types and odd lengths intact", async () => {
    /** y = Relu(x) (float32) and z = ids (int64). */
    const mixed = buildOnnxModel({
      opset: 17,
      inputs: [
        { name: "x", elemType: DTYPE.float, dims: ["n"] },
        { name: "ids", elemType: DTYPE.int64, dims: ["m"] },
      ],
      outputs: [
        { name: "y", elemType: DTYPE.float, dims: ["n"] },
        { name: "z", elemType: DTYPE.int64, dims: ["m"] },
      ],
      nodes: [
        { opType: "Relu", inputs: ["x"], outputs: ["y"], name: "relu" },
        { opType: "Identity", inputs: ["ids"], outputs: ["z"], name: "same" },
      ],
    });
    const memo = memoSession(await nodeSessions(mixed, { name: "mixed" }));
    const x = Float32Array.of(-1.5, 2.25, 3);
    const ids = BigInt64Array.of(7n, -(2n ** 40n));
    const feeds = () => ({
      x: f32(x.slice(), [3]),
      ids: { type: "int64", data: ids.slice(), dims: [2] } as PlainTensor,
    });
    const sent = feeds();
    await memo.run(sent);
    (sent.x.data as Float32Array).fill(0); // the caller's feeds change after the run: the kept copy must not
    const hit = await memo.run(feeds());
    expect(memo.memo().hits).toBe(1);
    expect(values(hit.y)).toEqual([0, 2.25, 3]);
    expect(hit.z!.data).toBeInstanceOf(BigInt64Array);
    expect(Array.from(hit.z!.data as BigInt64Array)).toEqual([7n, -(2n ** 40n)]);
    await memo.release();
  });

  it("hands a borrowing caller the kept arrays themselves, and still copies for one that does not borrow", async () => {
    const memo = memoSession(await nodeSessions(relu, { name: "relu" }));
    const x = () => f32(Float32Array.of(-1, 2, -3, 4), [4]);
    const first = await memo.run({ x: x() }, undefined, { borrow: true });
    const borrowed = await memo.run({ x: x() }, undefined, { borrow: true });
    expect(borrowed.y!.data).toBe(first.y!.data); // kept as the first run gave it: no copy either way
    const copied = await memo.run({ x: x() });
    expect(copied.y!.data).not.toBe(first.y!.data);
    expect(values(copied.y)).toEqual([0, 2, 0, 4]);
    expect(memo.memo().hits).toBe(2);
    await memo.release();
  });

  it("finds a borrowed output fed back in, and an equal copy of it, as one run (a decoder step's past)", async () => {
    const memo = memoSession(await nodeSessions(relu, { name: "relu" }));
    const first = await memo.run({ x: f32(Float32Array.of(-1, 2, -3, 4), [4]) }, undefined, { borrow: true });
    const past = first.y!; // kept by the memo, handed out as it is
    const step = await memo.run({ x: past }, undefined, { borrow: true });
    expect(memo.memo()).toMatchObject({ runs: 2, hits: 0 });
    // The same array again, then an equal copy of it: both are the run before, whichever way their bytes are keyed.
    expect((await memo.run({ x: past }, undefined, { borrow: true })).y!.data).toBe(step.y!.data);
    expect((await memo.run({ x: f32((past.data as Float32Array).slice(), [4]) })).y!.data).not.toBe(step.y!.data);
    expect(memo.memo()).toMatchObject({ runs: 4, hits: 2 });
    // A copy that differs in its last float is another run.
    const changed = (past.data as Float32Array).slice();
    changed[3] = 5;
    expect(values((await memo.run({ x: f32(changed, [4]) })).y)).toEqual([0, 2, 0, 5]);
    expect(memo.memo()).toMatchObject({ runs: 5, hits: 2 });
    await memo.release();
  });

  it("compares byte tensors at any offset and length, down to their last byte", async () => {
    /** y = x, bytes of any length. */
    const same = buildOnnxModel({
      opset: 17,
      inputs: [{ name: "x", elemType: DTYPE.bool, dims: ["n"] }],
      outputs: [{ name: "y", elemType: DTYPE.bool, dims: ["n"] }],
      nodes: [{ opType: "Identity", inputs: ["x"], outputs: ["y"], name: "same" }],
    });
    const memo = memoSession(await nodeSessions(same, { name: "same" }));
    const bits = (offset: number, last: number) => {
      const buffer = new Uint8Array(offset + 9).fill(1);
      buffer[offset + 8] = last;
      return { type: "bool", data: buffer.subarray(offset, offset + 9), dims: [9] } as PlainTensor;
    };
    await memo.run({ x: bits(4, 0) }); // aligned: two words and a byte
    await memo.run({ x: bits(1, 0) }); // not aligned: byte by byte
    expect(memo.memo().hits).toBe(1);
    const other = await memo.run({ x: bits(3, 1) });
    expect(Array.from(other.y!.data as Uint8Array).at(-1)).toBe(1);
    expect(memo.memo()).toMatchObject({ runs: 3, hits: 1, entries: 2 });
    await memo.release();
  });

  it("tells feeds apart by dims, values and fetches, and ignores feeds the graph does not take", async () => {
    const memo = memoSession(await nodeSessions(relu, { name: "relu" }));
    await memo.run({ x: f32(Float32Array.of(1, -2), [2]) });
    await memo.run({ x: f32(Float32Array.of(1, -2), [2]), unused: f32(Float32Array.of(5), [1]) });
    expect(memo.memo().hits).toBe(1);
    expect(values((await memo.run({ x: f32(Float32Array.of(1, -3), [2]) })).y)).toEqual([1, 0]);
    await memo.run({ x: f32(Float32Array.of(1, -2), [2]) }, ["y"]);
    expect(memo.memo()).toMatchObject({ runs: 4, hits: 1, entries: 3 });
    await memo.release();
  });

  it("keeps at most maxBytes, dropping the least recently used run", async () => {
    // Each run keeps 8 floats (4 in, 4 out) = 32 bytes; 80 bytes hold two.
    const memo = memoSession(await nodeSessions(relu, { name: "relu" }), { maxBytes: 80 });
    const x = (v: number) => f32(Float32Array.of(v, v, v, v), [4]);
    await memo.run({ x: x(1) });
    await memo.run({ x: x(2) });
    await memo.run({ x: x(1) }); // 1 is now the most recent
    await memo.run({ x: x(3) }); // 2 goes
    expect(memo.memo()).toMatchObject({ entries: 2, bytes: 64, hits: 1 });
    await memo.run({ x: x(1) });
    expect(memo.memo().hits).toBe(2);
    await memo.run({ x: x(2) });
    expect(memo.memo().hits).toBe(2);
    await memo.release();
  });

  it("stops memoising a session whose runs do not repeat", async () => {
    const memo = memoSession(await nodeSessions(relu, { name: "relu" }), { probeRuns: 10, minHitRate: 0.2 });
    for (let i = 0; i < 12; i++) await memo.run({ x: f32(Float32Array.of(i), [1]) });
    expect(memo.memo()).toMatchObject({ off: true, entries: 0, bytes: 0 });
    expect(values((await memo.run({ x: f32(Float32Array.of(-5), [1]) })).y)).toEqual([0]);
    await memo.release();
  });

  it("runs a run marked memo: false for real, and leaves what it keeps and counts as it was", async () => {
    const memo = memoSession(await nodeSessions(relu, { name: "relu" }), { probeRuns: 10, minHitRate: 0.2 });
    await memo.run({ x: f32(Float32Array.of(-1, 2), [2]) });
    // Many made-up runs (a warm-up) that would have switched the memo off had they counted.
    for (let i = 1; i <= 20; i++)
      expect(values((await memo.run({ x: f32(Float32Array.of(i), [1]) }, undefined, { memo: false })).y)).toEqual([i]);
    // Even a repeat of a kept run is computed, not answered from memory.
    await memo.run({ x: f32(Float32Array.of(-1, 2), [2]) }, undefined, { memo: false });
    expect(memo.memo()).toMatchObject({ runs: 1, hits: 0, entries: 1, off: false });
    await memo.run({ x: f32(Float32Array.of(-1, 2), [2]) });
    expect(memo.memo()).toMatchObject({ runs: 2, hits: 1 });
    await memo.release();
  });

  it("refuses options that cannot work, naming them", async () => {
    const session = await nodeSessions(relu, { name: "relu" });
    expect(() => memoSession(session, { maxBytes: 0 })).toThrow(
      'memoSession(): expected maxBytes > 0, maxRunBytes > 0, probeRuns ≥ 1 and 0 ≤ minHitRate ≤ 1, got {"maxBytes":0}',
    );
    expect(() => memoSession(session, { minHitRate: 2 })).toThrow(RangeError);
    await session.release();
  });
});

describe("memoSessions and hasRandomOps", () => {
  it("finds random operators, and never memoises a graph that has one", async () => {
    expect(hasRandomOps(vision)).toBe(false);
    expect(hasRandomOps(relu)).toBe(false);
    expect(hasRandomOps(noisy)).toBe(true);
    expect(hasRandomOps(Uint8Array.of(1, 2, 3))).toBe(true); // unreadable: not trusted to be pure
    const sessions = memoSessions(nodeSessions);
    const pure = await sessions(relu, { name: "relu" });
    const random = await sessions(noisy, { name: "noisy" });
    expect("memo" in pure).toBe(true);
    expect("memo" in random).toBe(false);
    const x = () => ({ x: f32(Float32Array.of(0, 0, 0, 0), [4]) });
    expect(values((await random.run(x())).y)).not.toEqual(values((await random.run(x())).y));
    await Promise.all([pure.release(), random.release()]);
  });
});
