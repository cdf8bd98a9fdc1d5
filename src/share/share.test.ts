import { describe, expect, it } from "vitest";
import { deflateRawSync } from "node:zlib";
import { strToU8, zipSync } from "fflate";
import {
  BUNDLE_LIMITS,
  MAX_LINK_CHARS,
  MAX_SHARE_JSON_BYTES,
  ShareError,
  checkSharePayload,
  decodeShare,
  deflateRaw,
  fromBase64Url,
  inflateRawBounded,
  readBundle,
  reportLink,
  runExportOf,
  runLink,
  shareUrl,
  toBase64Url,
  writeBundle,
  type RunShare,
} from "./index.ts";
import { demoReport, demoRunExport, HOSTILE_STRINGS } from "./fixtures.ts";

/** The refusal a promise (or a call) ends in. */
async function refusal(p: Promise<unknown> | (() => unknown)): Promise<ShareError> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (error) {
    expect(error).toBeInstanceOf(ShareError);
    return error as ShareError;
  }
  throw new Error("expected a ShareError, but it succeeded");
}

describe("base64url", () => {
  it("round-trips every byte value and uses only URL-safe characters", () => {
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 37) % 256);
    const text = toBase64Url(bytes);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(fromBase64Url(text)).toEqual(bytes);
    expect(toBase64Url(new Uint8Array([251, 255]))).toBe("-_8");
    expect(fromBase64Url("")).toEqual(new Uint8Array());
  });

  it("names the first character that is not base64url, and a length no encoding has", async () => {
    const bad = await refusal(() => fromBase64Url("abc%def"));
    expect(bad.reason).toBe("not-base64");
    expect(bad.message).toContain('"%" at character 4');
    expect((await refusal(() => fromBase64Url("abcde"))).message).toContain("5 characters long");
  });
});

describe("bounded inflate", () => {
  it("unpacks what deflateRaw packed (the same format zlib writes)", async () => {
    const text = strToU8("the same words again and again ".repeat(500));
    expect(await inflateRawBounded(await deflateRaw(text), 1 << 20)).toEqual(text);
    expect(await inflateRawBounded(new Uint8Array(deflateRawSync(text)), 1 << 20)).toEqual(text);
  });

  it("stops a decompression bomb at the bound with a clear message", async () => {
    // 8 MiB of zeros is ~8 KB compressed; the bound is 1 MiB.
    const bomb = new Uint8Array(deflateRawSync(new Uint8Array(8 * 2 ** 20)));
    const error = await refusal(inflateRawBounded(bomb, 1 << 20));
    expect(error.reason).toBe("too-large-unpacked");
    expect(error.message).toMatch(/more than 1,048,576 bytes.*decompression bomb/);
  });

  it("refuses damaged and truncated streams", async () => {
    const packed = await deflateRaw(strToU8("hello hello hello hello"));
    expect((await refusal(inflateRawBounded(packed.subarray(0, 3), 1000))).reason).toBe("corrupt");
    expect((await refusal(inflateRawBounded(new Uint8Array([0xff, 0xff, 0xff]), 1000))).reason).toBe("corrupt");
    await expect(inflateRawBounded(packed, 0)).rejects.toThrow(RangeError);
  });
});

describe("share links", () => {
  it("round-trips a run with its items, and the link opens at the app's address", async () => {
    const run = demoRunExport({ cases: 40 });
    const share = await runLink(run);
    expect(share.omitted).toEqual([]);
    expect(share.token).toMatch(/^1\.[A-Za-z0-9_-]+$/);
    const back = (await decodeShare(share.token)) as RunShare;
    expect(back.kind).toBe("run");
    expect(back.items!.map((i) => i.passed)).toEqual(run.items.map((i) => i.passed));
    expect(back.summary!.pass!.mean).toBeCloseTo((run.run.summary as { pass: { mean: number } }).pass.mean, 12);
    // "Save to my runs" keeps a run file that the run-file checks accept.
    const saved = runExportOf(back);
    expect(saved.items).toHaveLength(40);
    expect(saved.run.summary).toBeDefined();
    expect(shareUrl("http://localhost:4173", share.token)).toBe(`http://localhost:4173/#/share/${share.token}`);
    expect(shareUrl("https://x.example/app#/runs", "1.a")).toBe("https://x.example/app/#/share/1.a");
    expect(shareUrl("http://h/index.html?q=1", "1.a")).toBe("http://h/index.html#/share/1.a");
    expect(() => shareUrl("ftp://h", "1.a")).toThrow("must start with https:// or http://");
    expect(() => shareUrl("not a url", "1.a")).toThrow("is not a URL");
  });

  it("leaves a large run's items out, says so, and refuses what cannot fit even then", async () => {
    const run = demoRunExport({ cases: 3000 });
    const share = await runLink(run);
    expect(share.omitted).toEqual(["items"]);
    expect(share.token.length).toBeLessThanOrEqual(MAX_LINK_CHARS);
    const back = (await decodeShare(share.token)) as RunShare;
    expect(back.items).toBeUndefined();
    expect(back.omitted).toEqual(["items"]);
    expect(back.run.config["cases"]).toBeUndefined();
    const tooBig = await refusal(runLink(run, 200));
    expect(tooBig.reason).toBe("too-big-for-link");
    expect(tooBig.message).toContain("Send the bundle file instead");
  });

  it("puts a 600-case report in a link of at most 32 KB, dropping detail only when it must", async () => {
    const report = demoReport({ cases: 600 });
    const share = await reportLink(report);
    expect(share.token.length).toBeLessThanOrEqual(32 * 1024);
    const back = await decodeShare(share.token);
    expect(back.kind).toBe("report");
    if (back.kind !== "report") return;
    expect(back.report.hypotheses.map((h) => h.verdict)).toEqual(["SUPPORTED", "REFUTED"]);
    const full = await reportLink(report, 1e6);
    expect(full.omitted).toEqual([]);
    const slim = await reportLink(report, full.token.length - 1);
    expect(slim.omitted).toEqual(["figures"]);
    const slimBack = await decodeShare(slim.token);
    expect(slimBack.omitted).toEqual(["figures"]);
    expect(slimBack.kind === "report" && slimBack.report.signals.tested.every((s) => s.figure === undefined)).toBe(
      true,
    );
  });

  it("carries hostile strings as data, byte for byte", async () => {
    const run = demoRunExport({ cases: 14, hostile: true });
    const back = (await decodeShare((await runLink(run)).token)) as RunShare;
    expect(back.run.id).toBe(run.run.id);
    expect(back.run.model).toBe(HOSTILE_STRINGS[0] + " model");
    expect(back.items!.map((i) => i.caseId)).toEqual(run.items.map((i) => i.caseId));
    const report = demoReport({ hostile: true });
    const r = await decodeShare((await reportLink(report)).token);
    expect(r.kind === "report" && r.report.question).toBe(report.question);
  });

  it("refuses an oversized link before decoding it", async () => {
    const error = await refusal(decodeShare(`1.${"A".repeat(MAX_LINK_CHARS)}`));
    expect(error.reason).toBe("too-long");
    expect(error.message).toMatch(/carries 32,770 characters; a share link holds at most 32,768.*bundle/);
  });

  it("refuses a link bomb at the unpacked bound", async () => {
    const bomb = `1.${toBase64Url(new Uint8Array(deflateRawSync(new Uint8Array(4 * 2 ** 20).fill(32))))}`;
    expect(bomb.length).toBeLessThan(MAX_LINK_CHARS);
    const error = await refusal(decodeShare(bomb));
    expect(error.reason).toBe("too-large-unpacked");
    expect(error.message).toContain(MAX_SHARE_JSON_BYTES.toLocaleString("en"));
  });

  it("names what is wrong with malformed links", async () => {
    expect((await refusal(decodeShare("abc"))).message).toContain("does not start with a share version");
    expect((await refusal(decodeShare("7.abcd"))).reason).toBe("version");
    expect((await refusal(decodeShare("1.ab$cd"))).reason).toBe("not-base64");
    expect((await refusal(decodeShare("1.AAAA"))).reason).toBe("corrupt");
    const notJson = `1.${toBase64Url(await deflateRaw(strToU8("<script>alert(1)</script>")))}`;
    const error = await refusal(decodeShare(notJson));
    expect(error.reason).toBe("not-json");
    expect(error.message).not.toContain("<script>");
  });

  it("checks the schema: envelope, report fields, and a run's items against its plan", async () => {
    const pack = async (value: unknown) => `1.${toBase64Url(await deflateRaw(strToU8(JSON.stringify(value))))}`;
    expect((await refusal(decodeShare(await pack([1, 2])))).message).toContain("expected a JSON object");
    expect((await refusal(decodeShare(await pack({ format: "x" })))).message).toContain('format is "x"');
    const base = { format: "evalrx-share", version: 1, omitted: [] };
    expect((await refusal(decodeShare(await pack({ ...base, kind: "zip" })))).message).toContain('kind is "zip"');
    const badReport = { ...base, kind: "report", report: { ...demoReport(), hypotheses: "none" } };
    const e1 = await refusal(decodeShare(await pack(badReport)));
    expect(e1.reason).toBe("schema");
    expect(e1.message).toContain("hypotheses");
    const hostile = {
      ...base,
      kind: "report",
      report: { ...demoReport(), hypotheses: "<img src=x onerror=alert(1)>" },
    };
    const e2 = await refusal(() => checkSharePayload(hostile));
    expect(e2.message).toContain("hypotheses: expected Array, got a string");
    expect(e2.message).not.toContain("<img");
    expect((await refusal(() => checkSharePayload({ format: "<script>" }))).message).toContain("format is a string");
    const share = (await runLink(demoRunExport({ cases: 5 }))).payload as RunShare;
    const unplanned = { ...share, items: [{ ...share.items![0]!, caseId: "not-planned" }] };
    expect((await refusal(decodeShare(await pack(unplanned)))).message).toContain("a case the run did not plan");
    const lying = { ...share, items: share.items!.map((i) => ({ ...i, passed: true })) };
    expect((await refusal(() => checkSharePayload(lying))).message).toContain("marked passed but a check failed");
    const badOmit = { ...share, omitted: ["everything"] };
    expect((await refusal(() => checkSharePayload(badOmit))).message).toContain("omitted");
    const longId = { ...share, run: { ...share.run, id: "x".repeat(3000) } };
    expect((await refusal(() => checkSharePayload(longId))).message).toContain("run.id");
  });
});

describe("bundles", () => {
  const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

  it("round-trips a run with an image, and a report", async () => {
    const { sha256Hex, toBase64 } = await import("../store/codec.ts");
    const run = demoRunExport({ cases: 10 });
    const withImage = {
      ...run,
      images: [{ hash: `sha256:${sha256Hex(png)}`, type: "image/png", base64: toBase64(png) }],
    };
    const back = readBundle(writeBundle({ kind: "run", run: withImage }));
    expect(back.kind).toBe("run");
    if (back.kind !== "run") return;
    expect(back.run.items).toEqual(run.items);
    expect(back.run.images).toEqual(withImage.images);
    const report = demoReport({ hostile: true });
    const r = readBundle(writeBundle({ kind: "report", report }));
    expect(r.kind === "report" && r.report).toEqual(report);
  });

  it("refuses what is not a bundle, unknown entries, tampered images and schema violations", async () => {
    const refuse = (bytes: Uint8Array) => refusal(() => readBundle(bytes));
    expect((await refuse(strToU8("hello"))).message).toContain("a bundle is a ZIP file");
    const manifest = strToU8(JSON.stringify({ format: "evalrx-bundle", version: 1, kind: "run" }));
    const withExtra = zipSync({ "evalrx-bundle.json": manifest, "../../evil.sh": strToU8("rm -rf /") });
    expect((await refuse(withExtra)).message).toContain('holds "../../evil.sh", which a bundle never does');
    const tampered = zipSync({
      "evalrx-bundle.json": manifest,
      "run.json": strToU8(JSON.stringify(demoRunExport({ cases: 2 }))),
      [`images/${"0".repeat(64)}.png`]: png,
    });
    expect((await refuse(tampered)).message).toContain("does not hash to its name");
    const bad = { ...demoRunExport({ cases: 2 }), items: [{ caseId: "nope" }] };
    const schema = zipSync({ "evalrx-bundle.json": manifest, "run.json": strToU8(JSON.stringify(bad)) });
    expect((await refuse(schema)).reason).toBe("schema");
    const v2 = zipSync({ "evalrx-bundle.json": strToU8(JSON.stringify({ format: "evalrx-bundle", version: 2 })) });
    expect((await refuse(v2)).reason).toBe("version");
    const notJson = zipSync({ "evalrx-bundle.json": strToU8("<html>") });
    expect((await refuse(notJson)).reason).toBe("not-json");
  });

  it("stops a ZIP bomb at the entry bound, and a file over the size bound before opening it", async () => {
    const manifest = strToU8(JSON.stringify({ format: "evalrx-bundle", version: 1, kind: "run" }));
    const bomb = zipSync({ "evalrx-bundle.json": manifest, "run.json": new Uint8Array(4 * 2 ** 20) }, { level: 1 });
    expect(bomb.length).toBeLessThan(64 * 1024);
    const error = await refusal(() => readBundle(bomb, { ...BUNDLE_LIMITS, jsonBytes: 1 << 20 }));
    expect(error.reason).toBe("too-large-unpacked");
    expect(error.message).toMatch(/run\.json unpacks to more than 1,048,576 bytes.*ZIP bomb/);
    const tooLong = await refusal(() => readBundle(bomb, { ...BUNDLE_LIMITS, fileBytes: 1000 }));
    expect(tooLong.reason).toBe("too-long");
  });
});
