import { mkdtempSync, readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEventLines } from "../events.ts";
import { parseReport } from "../../report/schema.ts";
import { boardServer, type BoardServer } from "./board-server.node.ts";

const bin = fileURLToPath(new URL("../../node/bin.mjs", import.meta.url));

function investigate(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, ["investigate", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("exit", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("evalrx investigate --agentic --judge URL (the CLI, a local chat-completions endpoint)", () => {
  let server: BoardServer;
  beforeAll(async () => {
    server = await boardServer();
  });
  afterAll(() => server.close());

  it("runs the judge-decided loop on the bundled model and writes the path into the report", async () => {
    const out = mkdtempSync(join(tmpdir(), "evalrx-agentic-cli-"));
    const run = await investigate([
      "--agentic",
      "--judge",
      server.baseUrl,
      "--judge-model",
      "board-reader",
      "--sample",
      "60",
      "--max-tier",
      "L1",
      "--out",
      out,
    ]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/agent {2}1 {5}run_probe · 60 cases labelled and probed/);
    expect(run.stdout).toMatch(/agent stop {3}(success|no claim)/);
    const report = parseReport(readFileSync(join(out, "report.json"), "utf8"));
    expect(report.agentic!.judge).toBe(`openai:${new URL(server.baseUrl).origin}/v1/chat/completions#board-reader`);
    expect(report.agentic!.turns[0]!.tool).toBe("run_probe");
    expect(report.agentic!.turns.at(-1)!.tool).toBe("stop");
    // Each turn was one chat-completions request (the endpoint also words mechanisms as the M3/M4 judge).
    expect(server.requests.filter((r) => r.messages.at(-1)!.content.includes("Evidence board")).length).toBe(
      report.agentic!.turns.length,
    );
    const events = parseEventLines(readFileSync(join(out, "events.jsonl"), "utf8"));
    expect(events.filter((e) => e.type === "agentic.turn")).toHaveLength(report.agentic!.turns.length);
    expect(readFileSync(join(out, "report.html"), "utf8")).toContain("Agentic loop: the judge&#39;s path");
  }, 120_000);

  it("refuses --resume with --agentic", async () => {
    const run = await investigate(["--agentic", "--resume", "--out", mkdtempSync(join(tmpdir(), "evalrx-agentic-"))]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/--agentic does not resume an interrupted run/);
  }, 60_000);
});
