import { describe, expect, it } from "vitest";
import { pageLoadError } from "./page-load-error.ts";

describe("pageLoadError", () => {
  it("names the page and the chunk that failed, and says to reload", () => {
    const text = pageLoadError(
      "Reports",
      new TypeError("Failed to fetch dynamically imported module: http://localhost:4173/assets/ReportPage-x1.js"),
    );
    expect(text).toMatch(
      /^The Reports page's code could not be loaded \(assets\/ReportPage-x1\.js: Failed to fetch dynamically imported module\)\. /,
    );
    expect(text).toContain("Reload the page");
  });

  it("keeps a message that names no chunk, and one that is not an Error", () => {
    expect(pageLoadError("Runs", new Error("Importing a module script failed."))).toContain(
      "(Importing a module script failed.)",
    );
    expect(pageLoadError("Runs", undefined)).toContain("(no reason given)");
    expect(pageLoadError("Runs", "offline")).toContain("(offline)");
  });

  it("refuses a page without a title", () => {
    expect(() => pageLoadError(" ", new Error("x"))).toThrow(/title must name the page, got " "/);
  });
});
