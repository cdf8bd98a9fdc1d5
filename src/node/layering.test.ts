import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const eslint = new ESLint();

async function ruleIds(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

describe("library code imports neither the DOM nor Node (lint rule)", () => {
  it("flags Node imports and globals in library folders", async () => {
    const ids = await ruleIds(
      'import { readFileSync } from "node:fs";\nimport path from "path";\nexport const x = [readFileSync, path, process.env];\n',
      "src/stats/example.ts",
    );
    expect(ids.filter((id) => id === "no-restricted-imports")).toHaveLength(2);
    expect(ids).toContain("no-restricted-globals");
  });

  it("flags DOM globals and platform modules in library folders", async () => {
    const ids = await ruleIds(
      'import { configureOrtWasm } from "../models/ort-env.browser.ts";\nexport const x = [document.title, indexedDB, configureOrtWasm];\n',
      "src/agent/example.ts",
    );
    expect(ids.filter((id) => id === "no-restricted-globals")).toHaveLength(2);
    expect(ids).toContain("no-restricted-imports");
  });

  it("allows platform code where it belongs", async () => {
    expect(
      await ruleIds('import { readFileSync } from "node:fs";\nexport const x = readFileSync;\n', "src/node/example.ts"),
    ).toEqual([]);
    expect(await ruleIds("export const x = indexedDB;\n", "src/store/idb.browser.ts")).toEqual([]);
  });
});
