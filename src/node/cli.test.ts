import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const bin = fileURLToPath(new URL("./bin.mjs", import.meta.url));
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

it("evalrx --version prints the package version", () => {
  expect(execFileSync(bin, ["--version"], { encoding: "utf8" }).trim()).toBe(version);
});

it("evalrx --help describes usage and exit codes", () => {
  const out = execFileSync(bin, ["--help"], { encoding: "utf8" });
  expect(out).toContain("Usage: evalrx <command>");
  expect(out).toContain("Exit codes");
});

it("an unknown command exits 3 with one line naming it", () => {
  const run = spawnSync(bin, ["frobnicate"], { encoding: "utf8" });
  expect(run.status).toBe(3);
  expect(run.stderr).toContain("unknown command 'frobnicate'");
});
