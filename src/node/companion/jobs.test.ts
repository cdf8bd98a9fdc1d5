import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { calibrate, runView, type Calibration } from "../../evals/index.ts";
import { FileStore } from "../../store/files.node.ts";
import { applyStoreOp, CompanionClient } from "../../ui/companion/client.ts";
import type { JobMessage } from "./protocol.ts";
import { startCompanion, type Companion } from "./server.ts";

const POPE = readFileSync(new URL("../../../public/demo/pope.jsonl", import.meta.url), "utf8");
const DEMO = new URL("../../../public/demo/", import.meta.url).pathname;
const LINES = POPE.split("\n").filter(Boolean).slice(0, 30);

let dir: string;
let store: FileStore;
let replica: FileStore;
let companion: Companion;
let client: CompanionClient;

async function drain(id: string): Promise<JobMessage[]> {
  const out: JobMessage[] = [];
  for await (const m of client.messages(id)) {
    out.push(m);
    if (m.type === "store") await applyStoreOp(replica, m.write);
  }
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "evalrx-companion-jobs-"));
  store = await FileStore.open(join(dir, "store"));
  replica = await FileStore.open(join(dir, "page"));
  companion = await startCompanion({ store, dataRoot: DEMO, version: "test" });
  client = new CompanionClient({ url: companion.url, token: companion.token });
  // Two A/A runs of one sampled eval, run on the companion and held by the "page" (the replica).
  for (const runId of ["aa-1", "aa-2"]) {
    const { id } = await client.start({
      kind: "eval",
      config: {
        dataset: "pope",
        model: "tiny-vlm",
        evaluators: ["yesNo"],
        repeats: 2,
        generation: { maxNewTokens: 3, temperature: 1 },
      },
      cases: LINES.join("\n"),
      runId,
    });
    await drain(id);
  }
}, 120_000);

afterAll(async () => {
  await companion?.close();
  await store?.close();
  await replica?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("calibrate and explore on the companion", () => {
  it("calibrates the page's A/A runs as the page's stats worker would (the same numbers), streaming its steps", async () => {
    const runs = await Promise.all(
      ["aa-1", "aa-2"].map(async (id) => ({ run: (await replica.getRun(id))!, items: await replica.items(id) })),
    );
    const options = { target: 0.05, simulations: 40 };
    const { id } = await client.start({ kind: "calibrate", runs, options });
    const messages = await drain(id);
    const end = messages.at(-1)!;
    expect(end).toMatchObject({ type: "end", state: "finished" });
    expect(messages.filter((m) => m.type === "store")).toHaveLength(0);
    expect(messages.some((m) => m.type === "progress" && m.stage === "simulating A/A comparisons")).toBe(true);
    const here = calibrate(
      runs.map((r) => runView(r.run, r.items)),
      options,
    );
    expect((end as { result: Calibration }).result).toEqual(JSON.parse(JSON.stringify(here)));
    // A bad body is named.
    const bad = await client.start({ kind: "calibrate", runs: runs.slice(0, 1) });
    expect((await drain(bad.id)).at(-1)).toMatchObject({
      state: "failed",
      error: expect.stringMatching(/runs: expected 2 to 50 runs/),
    });
  });

  it("explores an eval log the page stores and writes its report run into the page's store", async () => {
    // The page's eval log: the cases with the first run's verdicts as their label.
    const items = await replica.items("aa-1");
    const passed = new Map(items.filter((i) => i.repeat === 0).map((i) => [i.caseId, i.passed]));
    const cases = LINES.map((line) => {
      const row = JSON.parse(line) as { id: string };
      return JSON.stringify({ ...row, label: passed.get(row.id) });
    }).join("\n");
    const { id } = await client.start({
      kind: "explore",
      cases,
      source: "pope-log.jsonl",
      runId: "explore-1",
      seed: 3,
    });
    const messages = await drain(id);
    expect(messages.at(-1)).toMatchObject({ type: "end", state: "finished", runId: "explore-1" });
    const run = await replica.getRun("explore-1");
    expect(run).toMatchObject({ kind: "explore", status: "finished" });
    const [report] = (await replica.scores("explore-1")).filter((s) => s.name === "report");
    expect((report!.detail as { kind: string }).kind).toBe("explore");
    expect((await replica.events("explore-1")).map((e) => e.type)).toContain("run.finished");
    expect(await store.getRun("explore-1")).toMatchObject({ status: "finished" });
  });
});
