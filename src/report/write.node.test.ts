import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeError, writeFileAtomic } from "./write.node.ts";

const dir = mkdtempSync(join(tmpdir(), "evalrx-write-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("writeFileAtomic", () => {
  it("replaces a file whole and leaves no temp file", () => {
    const path = join(dir, "report.json");
    writeFileSync(path, "old");
    writeFileAtomic(path, "new content");
    expect(readFileSync(path, "utf8")).toBe("new content");
    expect(readdirSync(dir)).toEqual(["report.json"]);
  });
  it("a failure names the file and leaves the old one as it was", () => {
    expect(() => writeFileAtomic(join(dir, "missing", "report.html"), "x")).toThrow(
      /^cannot write .*missing\/report\.html: /,
    );
    const full = writeError(
      Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }),
      "out/r.json",
    );
    expect(full.message).toBe(
      "the disk is full writing out/r.json; the file was left as it was. Free space and run again.",
    );
  });
});
