import { expect, it } from "vitest";
import { importQuotaMessage, isQuotaFailure } from "./import-quota.ts";

it("a full quota says what the import kept and about how much space the rest needs", () => {
  // 30k of the 40k rows read were stored, from 24 MB read: ~18 MB stored, so ~42 MB of the 60 MB file to go.
  expect(
    importQuotaMessage({
      datasetId: "big",
      kept: "added",
      rowsRead: 40000,
      rowsStored: 30000,
      fileBytes: 60e6,
      bytesRead: 24e6,
    }),
  ).toBe(
    "The browser's storage is full: 30000 of the file's rows were stored in 'big' and are kept; the rest of the file needs about 40.1 MB more. " +
      "Free space (delete old runs, traces or datasets), then import it again, adding to 'big': only the cases it lacks are stored.",
  );
  // A new dataset is removed again: the whole file's worth is needed.
  expect(
    importQuotaMessage({
      datasetId: "fresh",
      kept: "nothing",
      rowsRead: 5000,
      rowsStored: 0,
      fileBytes: 3_500_000,
      bytesRead: 1e6,
    }),
  ).toBe(
    "The browser's storage is full: nothing of 'fresh' was kept (a new dataset is stored whole or not at all); it needs about 3.3 MB free. " +
      "Free space (delete old runs, traces or datasets), then import it again.",
  );
});

it("knows the store's quota failure and the browser's, and nothing else", () => {
  expect(isQuotaFailure(Object.assign(new Error("x"), { quota: true }))).toBe(true);
  expect(isQuotaFailure(new DOMException("full", "QuotaExceededError"))).toBe(true);
  expect(isQuotaFailure(new Error("the write was rolled back"))).toBe(false);
  expect(isQuotaFailure(undefined)).toBe(false);
});
