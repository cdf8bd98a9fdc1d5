import { expect, it } from "vitest";
import { quotaMessage } from "./eval-job.ts";

it("a full quota says what is kept and how much space the rest needs", () => {
  expect(quotaMessage(400, 600, 512)).toBe(
    "The browser's storage is full: 400 of 600 trials are judged and kept; the other 200 need about 150.0 KB more. Free space (delete old runs or datasets), then Resume the run.",
  );
});
