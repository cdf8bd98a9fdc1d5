import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync, readFileSync, copyFileSync } from "node:fs";
import { request } from "node:http";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileStore } from "../../store/files.node.ts";
import { applyStoreOp, CompanionClient, CompanionError } from "../../ui/companion/client.ts";
import type { EvalJobBody, JobMessage } from "./protocol.ts";
import { startCompanion, type Companion } from "./server.ts";

const TOKEN = "test-token-0123456789abcdef";
const POPE = readFileSync(new URL("../../../public/demo/pope.jsonl", import.meta.url), "utf8");
const DEMO = new URL("../../../public/demo/", import.meta.url).pathname;

let dir: string;
let store: FileStore;
let companion: Companion;

/** A raw request, so a test can set any Host, Origin or body. */
function raw(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: companion.port, path, method: options.method ?? "GET", headers: options.headers },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

const auth = { Authorization: `Bearer ${TOKEN}` };

/** The eval the page would run: 24 pope cases, sent inline as the page sends its stored cases. */
function popeJob(extra: Partial<EvalJobBody> = {}): EvalJobBody {
  const lines = POPE.split("\n").filter(Boolean).slice(0, 24);
  // The page's cases name images by content hash; here they keep their paths, read from --data.
  return {
    kind: "eval",
    config: { dataset: "pope", model: "tiny-vlm", evaluators: ["yesNo"], generation: { maxNewTokens: 3 } },
    cases: lines.join("\n"),
    runId: "pope-companion-1",
    ...extra,
  };
}

async function drain(client: CompanionClient, id: string, replica?: FileStore): Promise<JobMessage[]> {
  const out: JobMessage[] = [];
  for await (const m of client.messages(id)) {
    out.push(m);
    if (replica && m.type === "store") await applyStoreOp(replica, m.write);
  }
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "evalrx-companion-"));
  store = await FileStore.open(join(dir, "store"));
  mkdirSync(join(dir, "data", "images"), { recursive: true });
  copyFileSync(join(DEMO, "images", "scene-0001.png"), join(dir, "data", "images", "scene-0001.png"));
  for (const n of ["0002", "0003", "0004", "0005"])
    copyFileSync(join(DEMO, "images", `scene-${n}.png`), join(dir, "data", "images", `scene-${n}.png`));
  writeFileSync(join(dir, "secret.jsonl"), POPE.split("\n")[0] + "\n");
  symlinkSync(join(dir, "secret.jsonl"), join(dir, "data", "leak.jsonl"));
  mkdirSync(join(dir, "models"));
  symlinkSync(join(dir, "store"), join(dir, "models", "out"));
  companion = await startCompanion({
    token: TOKEN,
    store,
    dataRoot: join(dir, "data"),
    modelsRoot: join(dir, "models"),
    maxJobs: 1,
    maxBodyBytes: 256 * 1024,
    version: "test",
  });
});

afterAll(async () => {
  await companion?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the companion is sealed", () => {
  it("listens on 127.0.0.1 only, and its pairing link carries the address and token in the fragment", async () => {
    expect(companion.url).toBe(`http://127.0.0.1:${companion.port}`);
    const link = new URL(companion.pairingUrl);
    expect(link.origin).toBe("http://localhost:4173");
    const params = new URLSearchParams(link.hash.replace(/^#\/pair\?/, ""));
    expect(params.get("companion")).toBe(companion.url);
    expect(params.get("token")).toBe(TOKEN);
    // Any non-loopback address of this machine refuses the connection.
    const external = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal);
    if (external) {
      const refused = await new Promise<string>((resolve) => {
        const req = request({ host: external.address, port: companion.port, path: "/status", headers: auth }, () =>
          resolve("answered"),
        );
        req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
        req.end();
      });
      expect(refused).toBe("ECONNREFUSED");
    }
  });

  it("answers 401 without the token or with a wrong one", async () => {
    const none = await raw("/status");
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toContain("Bearer");
    expect(JSON.parse(none.body).error).toMatch(/no token/);
    const wrong = await raw("/status", { headers: { Authorization: "Bearer nope-nope-nope-nope" } });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body).error).toMatch(/wrong token/);
    const jobs = await raw("/jobs", { method: "POST", body: JSON.stringify(popeJob()) });
    expect(jobs.status).toBe(401);
    expect((await raw("/status", { headers: auth })).status).toBe(200);
  });

  it("answers 403 to another origin (even with the token), and to a Host that is not its loopback address", async () => {
    const evil = await raw("/status", { headers: { ...auth, Origin: "https://evil.example" } });
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body).error).toMatch(/origin 'https:\/\/evil.example' may not use this companion/);
    const preflight = await raw("/jobs", {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.status).toBe(403);
    const rebinding = await raw("/status", { headers: { ...auth, Host: `attacker.example:${companion.port}` } });
    expect(rebinding.status).toBe(403);
    // The app's own origin passes the preflight and gets CORS headers.
    const ok = await raw("/jobs", {
      method: "OPTIONS",
      headers: {
        Origin: "http://localhost:4173",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
      },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers["access-control-allow-origin"]).toBe("http://localhost:4173");
    expect(String(ok.headers["access-control-allow-headers"])).toContain("authorization");
    const status = await raw("/status", { headers: { ...auth, Origin: "http://127.0.0.1:4173" } });
    expect(status.status).toBe(200);
    expect(status.headers["access-control-allow-origin"]).toBe("http://127.0.0.1:4173");
  });

  it("answers 413 to a body over the limit, and 400 to one that is not a job", async () => {
    const big = await raw("/jobs", { method: "POST", headers: auth, body: Buffer.alloc(300 * 1024, 0x20) });
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body).error).toMatch(/over the 262144-byte limit/);
    const notJson = await raw("/jobs", { method: "POST", headers: auth, body: "{" });
    expect(notJson.status).toBe(400);
    const kind = await raw("/jobs", { method: "POST", headers: auth, body: '{"kind":"mine-bitcoin"}' });
    expect(kind.status).toBe(400);
    expect(JSON.parse(kind.body).error).toMatch(/kinds are \['eval', 'investigate', 'calibrate', 'explore'\]/);
  });

  it("confines datasets and models to the folders named at start (traversal and links out refused)", async () => {
    const client = new CompanionClient({ url: companion.url, token: TOKEN });
    const cases = [
      { dataset: "../secret.jsonl", error: /leaves the dataset's folder/ },
      { dataset: "/etc/passwd", error: /absolute/ },
      { dataset: "leak.jsonl", error: /link that leads out/ },
    ];
    for (const c of cases) {
      const { id } = await client.start({
        kind: "eval",
        config: { dataset: c.dataset, model: "tiny-vlm", evaluators: ["yesNo"] },
      });
      const end = (await drain(client, id)).at(-1)!;
      expect(end).toMatchObject({ type: "end", state: "failed" });
      expect(end.type === "end" && end.error).toMatch(c.error);
    }
    for (const [model, error] of [
      ["../store", /leaves/],
      ["out", /link that leads out of the --models folder/],
    ] as const) {
      const { id } = await client.start(popeJob({ runId: `model-${model}`, config: { ...popeJob().config, model } }));
      const end = (await drain(client, id)).at(-1)!;
      expect(end.type === "end" && end.error).toMatch(error);
    }
    // A case's image path may not leave --data either.
    const escaping = POPE.split("\n")[0]!.replace("images/scene-0001.png", "../secret.jsonl");
    const { id } = await client.start(popeJob({ runId: "image-escape", cases: escaping }));
    const end = (await drain(client, id)).at(-1)!;
    expect(end).toMatchObject({ type: "end", state: "finished" });
    const items = await store.items("image-escape");
    expect(items[0]!.error).toMatch(/leaves the dataset's folder/);
  });
});

describe("jobs on the companion", () => {
  it("runs the page's eval on onnxruntime-node and streams writes that rebuild the same run in the page's store", async () => {
    const client = new CompanionClient({ url: companion.url, token: TOKEN });
    const replica = await FileStore.open(join(dir, "replica"));
    try {
      const { id } = await client.start(
        popeJob({ codeVersion: "0.1.0+page", modelSource: { kind: "bundled", key: "tiny-vlm" } }),
      );
      const messages = await drain(client, id, replica);
      const end = messages.at(-1)!;
      expect(end).toMatchObject({ type: "end", state: "finished", runId: "pope-companion-1", status: "finished" });
      expect(messages.some((m) => m.type === "progress")).toBe(true);
      const there = await store.exportRun("pope-companion-1", { dataset: false });
      const here = await replica.exportRun("pope-companion-1", { dataset: false });
      expect(here.run).toEqual(there.run);
      expect(here.items).toEqual(there.items);
      expect(here.events).toEqual(there.events);
      expect(here.progress).toEqual(there.progress);
      expect(here.items).toHaveLength(24);
      expect(here.run.config["page"]).toEqual({
        config: popeJob().config,
        modelSource: { kind: "bundled", key: "tiny-vlm" },
      });
      // The model really ran: its yes/no answers, judged.
      expect(new Set(here.items.map((i) => i.output.trim().split(/\s+/)[0]))).toEqual(new Set(["yes", "no"]));
    } finally {
      await replica.close();
    }
  });

  it("takes one job at a time here (429 with Retry-After), cancels, and resumes from the page's copy without judging a case twice", async () => {
    const client = new CompanionClient({ url: companion.url, token: TOKEN });
    const replica = await FileStore.open(join(dir, "replica-2"));
    try {
      const long = popeJob({ runId: "pope-long", config: { ...popeJob().config, repeats: 400 } });
      const { id } = await client.start(long);
      const second = await client.start(popeJob({ runId: "other" })).catch((e: unknown) => e);
      expect(second).toBeInstanceOf(CompanionError);
      expect((second as CompanionError).status).toBe(429);
      expect((second as CompanionError).retryAfter).toBe(5);
      const messages: JobMessage[] = [];
      for await (const m of client.messages(id)) {
        messages.push(m);
        if (m.type === "store") await applyStoreOp(replica, m.write);
        if (m.type === "progress" && m.done >= 30) await client.cancel(id);
      }
      expect(messages.at(-1)).toMatchObject({ type: "end", state: "cancelled", status: "cancelled" });
      const kept = await replica.items("pope-long");
      expect(kept.length).toBeGreaterThanOrEqual(30);
      expect(kept.length).toBeLessThan(24 * 400);
      expect((await replica.getRun("pope-long"))!.status).toBe("cancelled");

      // Resume from the page's copy (the same plan), cancel again soon: no index twice, the kept items untouched.
      const from = await replica.exportRun("pope-long", { dataset: false });
      const resumed = await client.start({ ...long, runId: undefined, resume: "pope-long", from });
      let seen = 0;
      for await (const m of client.messages(resumed.id)) {
        if (m.type === "store") await applyStoreOp(replica, m.write);
        if (m.type === "store" && m.write.op === "appendItems" && ++seen === 20) await client.cancel(resumed.id);
      }
      const after = await replica.items("pope-long");
      expect(after.length).toBeGreaterThanOrEqual(kept.length + 20);
      expect(new Set(after.map((i) => i.index)).size).toBe(after.length);
      expect(after.slice(0, kept.length)).toEqual(kept);
      const progress = await replica.progress("pope-long");
      expect(progress!.done).toBe(after.length);
    } finally {
      await replica.close();
    }
  }, 60_000);
});
