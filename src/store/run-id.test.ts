import { describe, expect, it } from "vitest";
import { newRunId } from "./run-id.ts";

describe("newRunId", () => {
  it("names a run by its eval and start time, unique among the runs stored", async () => {
    const taken = new Set(["pope-yesNo-20261201T161118Z", "pope-yesNo-20261201T161118Z-2"]);
    const store = { getRun: async (id: string) => (taken.has(id) ? ({ id } as never) : undefined) };
    const at = new Date("2026-12-01T16:11:18.456Z");
    expect(await newRunId(store, "pope:yesNo", new Date("2026-12-02T00:00:00Z"))).toBe("pope-yesNo-20261202T000000Z");
    expect(await newRunId(store, "pope-yesNo", at)).toBe("pope-yesNo-20261201T161118Z-3");
  });
});
