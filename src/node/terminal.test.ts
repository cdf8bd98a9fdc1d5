import { afterEach, describe, expect, it, vi } from "vitest";
import { safeConsole, terminalSafe } from "./terminal.ts";

describe("terminalSafe", () => {
  it("shows control and bidi characters as escapes and keeps text, tabs and newlines", () => {
    expect(terminalSafe("col\u001b[31mred\u001b]0;title\u0007")).toBe("col\\x1b[31mred\\x1b]0;title\\x07");
    expect(terminalSafe("a\rb\u009bc\u007f")).toBe("a\\x0db\\x9bc\\x7f");
    expect(terminalSafe("abc\u202edef\u2066")).toBe("abc\\u202edef\\u2066");
    expect(terminalSafe("ü 中文\tx\ny")).toBe("ü 中文\tx\ny");
  });
});

describe("safeConsole", () => {
  afterEach(() => vi.restoreAllMocks());
  it("escapes what console.log and console.error print until restored", () => {
    const printed: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void printed.push(String(a[0])));
    const restore = safeConsole();
    console.log("column %s", "\u001b[2Jcleared");
    restore();
    console.log("\u001b[0m");
    expect(printed).toEqual(["column \\x1b[2Jcleared", "\u001b[0m"]);
    expect(log).toHaveBeenCalledTimes(2);
  });
});
