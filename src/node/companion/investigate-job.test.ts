import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson, importDataset, sha256Hex } from "../../datasets/index.ts";
import { FileStore } from "../../store/files.node.ts";
import { applyStoreOp, CompanionClient } from "../../ui/companion/client.ts";
import type { InvestigateJobBody, JobMessage } from "./protocol.ts";
import { startCompanion, type Companion } from "./server.ts";

const TOKEN = "test-token-investigate-0123456789";
const DEMO = new URL("../../../public/demo/", import.meta.url).pathname;
const POPE = readFileSync(join(DEMO, "pope.jsonl"), "utf8");

let dir: string;
let store: FileStore;
let companion: Companion;
let client: CompanionClient;

/**
 * The investigation the page would send: `n` pope cases naming their images by content hash (as the page stores
 * them), the images inline, the fingerprint the page computes over the chosen cases.
 */
async function body(runId: string, n: number, extra: Partial<InvestigateJobBody> = {}): Promise<InvestigateJobBody> {
  const images: Record<string, string> = {};
  const lines = POPE.split("\n")
    .filter(Boolean)
    .slice(0, n)
    .map((line) => {
      const row = JSON.parse(line) as { input: { image: string } };
      const bytes = readFileSync(join(DEMO, row.input.image));
      const key = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
      images[key] = bytes.toString("base64");
      row.input.image = key;
      return JSON.stringify(row);
    });
  const { cases } = await importDataset(lines.join("\n"), { format: "jsonl", name: "pope.jsonl" });
  return {
    kind: "investigate",
    plan: { dataset: "pope", question: "What predicts the hallucinations?", maxTier: "none", holdout: 0.4, seed: 1 },
    model: "tiny-vlm",
    cases: lines.join("\n"),
    fingerprint: sha256Hex(cases.map((c) => canonicalJson(c)).join("\n")).slice(0, 12),
    source: "pope.jsonl",
    images,
    modelSource: { kind: "bundled", key: "tiny-vlm" },
    runId,
    ...extra,
  };
}

/** Follows a job's stream to its end, making each store write in `replica` as the page does in IndexedDB. */
async function follow(id: string, replica: FileStore, onMessage?: (m: JobMessage) => void): Promise<JobMessage[]> {
  const out: JobMessage[] = [];
  for await (const m of client.messages(id)) {
    out.push(m);
    if (m.type === "store") await applyStoreOp(replica, m.write);
    onMessage?.(m);
  }
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "evalrx-companion-investigate-"));
  store = await FileStore.open(join(dir, "store"));
  companion = await startCompanion({ token: TOKEN, store, version: "test" });
  client = new CompanionClient({ url: companion.url, token: TOKEN });
});

afterAll(async () => {
  await companion?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("an investigation on the companion", () => {
  it("runs the loop on onnxruntime-node and its writes rebuild the same investigation in the page's store", async () => {
    const replica = await FileStore.open(join(dir, "replica"));
    try {
      const { id } = await client.start(await body("investigate-companion-1", 60));
      const messages = await follow(id, replica);
      const end = messages.at(-1)!;
      expect((end as { error?: string }).error).toBeUndefined();
      expect(end).toMatchObject({ type: "end", state: "finished", runId: "investigate-companion-1" });
      expect(messages.some((m) => m.type === "progress" && m.stage.startsWith("M1"))).toBe(true);

      const run = (await replica.getRun("investigate-companion-1"))!;
      expect(run).toMatchObject({ kind: "investigation", status: "finished", dataset: "pope", model: "tiny-vlm" });
      expect((run.config as { page: unknown }).page).toEqual({ modelSource: { kind: "bundled", key: "tiny-vlm" } });
      // The log, event for event (with the same seq and ts), ending with run.finished.
      const events = await replica.events(run.id);
      expect(events).toEqual(await store.events(run.id));
      expect(events[0]!.type).toBe("run.started");
      expect(events.at(-1)!.type).toBe("run.finished");
      // The label and probe runs with every case's item, and the report where the report page reads it.
      for (const sub of [`${run.id}-m1-label`, `${run.id}-m1-probe`]) {
        expect((await replica.items(sub)).length).toBe(60);
        expect(await replica.items(sub)).toEqual(await store.items(sub));
      }
      const report = (await replica.scores(run.id)).find((s) => s.name === "report");
      expect(report?.detail).toMatchObject({ provenance: { data: { fingerprint: run.fingerprint } } });
    } finally {
      await replica.close();
    }
  }, 120_000);

  it("is cancelled from the page: what it stored stays, marked cancelled in both stores", async () => {
    const replica = await FileStore.open(join(dir, "replica-cancel"));
    try {
      const { id } = await client.start(await body("investigate-companion-2", 60));
      let asked = false;
      const messages = await follow(id, replica, (m) => {
        if (!asked && m.type === "progress") {
          asked = true;
          void client.cancel(id);
        }
      });
      expect(messages.at(-1)).toMatchObject({ type: "end", state: "cancelled", runId: "investigate-companion-2" });
      expect((messages.at(-1) as { error?: string }).error).toMatch(
        /was cancelled; its labels, probes and repair runs are kept/,
      );
      expect((await replica.getRun("investigate-companion-2"))!.status).toBe("cancelled");
      expect((await store.getRun("investigate-companion-2"))!.status).toBe("cancelled");
      expect(await replica.events("investigate-companion-2")).toEqual(await store.events("investigate-companion-2"));
    } finally {
      await replica.close();
    }
  }, 120_000);

  it("refuses cases that do not hash to the page's fingerprint, and a plan with a wrong field, naming it", async () => {
    const replica = await FileStore.open(join(dir, "replica-bad"));
    try {
      const changed = await body("investigate-companion-3", 12, { fingerprint: "000000000000" });
      let messages = await follow((await client.start(changed)).id, replica);
      expect(messages.at(-1)).toMatchObject({ type: "end", state: "failed" });
      expect((messages.at(-1) as { error: string }).error).toMatch(
        /cases: they hash to fingerprint [0-9a-f]{12} here, not to the page's 000000000000/,
      );
      const good = await body("investigate-companion-4", 12);
      const wrong = { ...good, plan: { ...good.plan, holdout: 1.5 } };
      messages = await follow((await client.start(wrong)).id, replica);
      expect((messages.at(-1) as { error: string }).error).toMatch(
        /plan.holdout: expected a share strictly between 0 and 1/,
      );
      expect(await replica.getRun("investigate-companion-3")).toBeUndefined();
    } finally {
      await replica.close();
    }
  });
});
