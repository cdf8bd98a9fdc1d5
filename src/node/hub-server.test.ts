import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { REPO_ROOT } from "../models/load.node.ts";
import { startHubServer, type HubServer } from "./hub-server.ts";

let hub: HubServer;
beforeAll(async () => {
  hub = await startHubServer({ "evalrx/tiny-lm": `${REPO_ROOT}models/tiny-lm` });
});
afterAll(() => hub?.close());

describe("the hub-shaped test server", () => {
  it("serves a repo's files under /<owner>/<name>/resolve/main/ with the hub's headers", async () => {
    const response = await fetch(`${hub.url}/evalrx/tiny-lm/resolve/main/config.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("etag")).toMatch(/^"[0-9a-f]{64}"$/);
    expect(response.headers.get("x-repo-commit")).toMatch(/^[0-9a-f]{40}$/);
    const text = await response.text();
    expect(Number(response.headers.get("content-length"))).toBe(Buffer.byteLength(text));
    expect(JSON.parse(text).model_type).toBe("llama");
  });

  it("redirects big files the way the hub redirects LFS files, to the same bytes", async () => {
    const url = `${hub.url}/evalrx/tiny-lm/resolve/main/onnx/model.onnx`;
    const redirect = await fetch(url, { redirect: "manual" });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toMatch(/^\/lfs\/[0-9a-f]{64}$/);
    expect(Number(redirect.headers.get("x-linked-size"))).toBe(
      readFileSync(`${REPO_ROOT}models/tiny-lm/onnx/model.onnx`).length,
    );
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    expect(Buffer.from(bytes).equals(readFileSync(`${REPO_ROOT}models/tiny-lm/onnx/model.onnx`))).toBe(true);
  });

  it("answers a missing file 404 and an unknown repo 401, with the hub's error headers; lists files", async () => {
    const missing = await fetch(`${hub.url}/evalrx/tiny-lm/resolve/main/preprocessor_config.json`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-error-code")).toBe("EntryNotFound");
    expect(await missing.json()).toEqual({ error: "Entry not found" });
    expect((await fetch(`${hub.url}/nobody/nothing/resolve/main/config.json`)).status).toBe(401);
    expect((await fetch(`${hub.url}/evalrx/tiny-lm/resolve/main/../../package.json`)).status).toBe(404);
    const list = (await (await fetch(`${hub.url}/api/models/evalrx/tiny-lm/revision/main`)).json()) as {
      siblings: { rfilename: string }[];
    };
    expect(list.siblings.map((s) => s.rfilename)).toContain("onnx/model.onnx");
  });

  it("logs every request with its status", () => {
    expect(hub.requests.some((r) => r.url.endsWith("/config.json") && r.status === 200)).toBe(true);
    expect(hub.requests.some((r) => r.url.endsWith("preprocessor_config.json") && r.status === 404)).toBe(true);
  });

  it("refuses a repo that is not a folder", async () => {
    await expect(startHubServer({ "a/b": `${REPO_ROOT}no-such-folder` })).rejects.toThrow(
      /hub server: repo 'a\/b' names .*no-such-folder, which is not a folder/,
    );
  });
});
