import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { gqaDecoder, gqaDecoderConfig } from "../../models/fixtures/gqa-decoder.ts";
import { REPO_ROOT } from "../../models/load.node.ts";
import { main } from "../cli.ts";

const bin = fileURLToPath(new URL("../bin.mjs", import.meta.url));
const LAYOUTS = `${REPO_ROOT}src/models/fixtures/layouts/`;

/** Runs `evalrx model …` through the real binary (a process of its own). */
function spawn(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(bin, ["model", ...args], { encoding: "utf8", timeout: 120_000 }, (error, stdout, stderr) =>
      done({ status: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs `evalrx model …` in this process (the CLI's `main`, output captured): seconds faster than a process each. */
async function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
  const error = vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")));
  try {
    const status = await main(["model", ...args]);
    return { status, stdout: out.join("\n"), stderr: err.join("\n") };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

const dir = mkdtempSync(join(tmpdir(), "evalrx-model-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("evalrx model inspect", () => {
  it("--json prints one object with capabilities and attention.found, read from a folder's graphs", async () => {
    const r = await spawn(["inspect", `${LAYOUTS}lm-3d-opset11`, "--json"]);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.capabilities).toEqual(["logits", "generate", "attention", "attention_write"]);
    expect(report.attention).toMatchObject({ found: 2, layers: 2, source: "tapped", readable: true });
    expect(report.attention.sites[0].places[0]).toMatchObject({ where: "main graph", layout: "3-D batched" });
    expect(report.spec).toMatchObject({ family: "gpt2", layers: 2, heads: 2, contextLength: 32 });
  });

  it("a single .onnx file, and a bundled key, in words", async () => {
    const file = await run(["inspect", `${LAYOUTS}lm-functions/onnx/model.onnx`]);
    expect(file.status, file.stderr).toBe(0);
    expect(file.stdout).toContain("function __main__.Attention: inlined at 2 call(s)");
    const bundled = await run(["inspect", "tiny-vlm"]);
    expect(bundled.stdout).toMatch(/^tiny-vlm — llava \(image-text\), spec registered$/m);
    expect(bundled.stdout).toContain("attention: 2 of 2 layers (exported: main graph)");
  });

  it("--want exits 1 when a capability is missing, with what cannot be read, where, why and what to do", async () => {
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
    writeFileSync(join(folder, "config.json"), JSON.stringify(gqaDecoderConfig(sizes)));
    writeFileSync(join(folder, "onnx/model_q4.onnx"), gqaDecoder(sizes));
    const r = await run(["inspect", folder, "--want", "attention"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/onnx\/model_q4\.onnx \(decoder, q4,/);
    expect(r.stdout).toMatch(
      /attention: not readable: GroupQueryAttention '.*' \(main graph\) was not decomposed: not decomposed: smooth_softmax/,
    );
    expect(r.stdout).toMatch(/what to do: re-export the model without ONNX Runtime's attention fusion/);
    expect(r.stdout).toContain("missing: attention (asked with --want)");
    const bad = await run(["inspect", folder, "--want", "attention,x-ray"]);
    expect(bad.status).toBe(3);
    expect(bad.stderr).toContain("--want names 'x-ray', which is not a capability");
  });

  it("refuses what is neither a folder, an .onnx file nor a hub id", async () => {
    const r = await run(["inspect", "no/such/thing/here"]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(
      /'no\/such\/thing\/here' is neither a bundled model, an existing folder or \.onnx file, nor a hub id/,
    );
    const sub = await run(["list"]);
    expect(sub.stderr).toMatch(/expected 'evalrx model inspect <PATH\|HUB_ID>'/);
  });

  describe("a hub id, from a hub-shaped server", () => {
    let server: Server;
    let hub: string;
    const served: string[] = [];
    beforeAll(async () => {
      const repo = join(dir, "hub", "evalrx", "merged-lm");
      cpSync(`${LAYOUTS}lm-merged`, repo, { recursive: true });
      const files: string[] = [];
      const walk = (d: string) => {
        for (const name of readdirSync(d)) {
          const p = join(d, name);
          if (statSync(p).isDirectory()) walk(p);
          else files.push(relative(repo, p));
        }
      };
      walk(repo);
      server = createServer((req, res) => {
        const url = req.url ?? "";
        if (url === "/api/models/evalrx/merged-lm/revision/main") {
          res.setHeader("Content-Type", "application/json");
          res.end(JSON.stringify({ siblings: files.map((rfilename) => ({ rfilename })) }));
          return;
        }
        const m = /^\/evalrx\/merged-lm\/resolve\/main\/(.+)$/.exec(url);
        if (!m || !files.includes(m[1]!)) {
          res.writeHead(404).end("not found");
          return;
        }
        served.push(m[1]!);
        res.setHeader("Content-Type", "application/octet-stream");
        res.end(readFileSync(join(repo, m[1]!)));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      hub = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("lists the repository, downloads only the config and the graph the layout needs", async () => {
      const r = await run(["inspect", "evalrx/merged-lm", "--hub", hub, "--json"]);
      expect(r.status, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout);
      expect(report.attention.found).toBe(2);
      expect(report.files.map((f: { path: string }) => f.path)).toEqual(["onnx/decoder_model_merged.onnx"]);
      expect(served.sort()).toEqual(["config.json", "onnx/decoder_model_merged.onnx"]);
      const missing = await run(["inspect", "evalrx/nothing", "--hub", hub]);
      expect(missing.status).toBe(3);
      expect(missing.stderr).toMatch(/the hub has no model 'evalrx\/nothing'/);
    });
  });
});
