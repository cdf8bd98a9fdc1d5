/**
 * A local server in the Hugging Face hub's URL layout, for testing the hub
 * download path with no internet: model folders on disk served as repos
 * (`/<owner>/<name>/resolve/<revision>/<file>`), with the headers the hub
 * sends and transformers.js reads (Content-Length, ETag, X-Repo-Commit, CORS),
 * large files redirected the way the hub redirects LFS files, 404s with the
 * hub's error headers, the file-list API, and a log of every request.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";

/** One request the server answered. */
export interface HubRequest {
  readonly method: string;
  /** The path and query asked for. */
  readonly url: string;
  readonly status: number;
}

export interface HubServer {
  /** The hub address to point a client at (`http://127.0.0.1:<port>`). */
  readonly url: string;
  /** Every request, in order. */
  readonly requests: HubRequest[];
  close(): Promise<void>;
}

/** Files at least this big are served the way the hub serves LFS files: a 302 to a content-addressed URL. */
const LFS_BYTES = 100_000;
const COMMIT = "0123456789abcdef0123456789abcdef01234567";

const CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers":
    "X-Repo-Commit,X-Request-Id,X-Error-Code,X-Error-Message,X-Total-Count,ETag,Link,Accept-Ranges,Content-Range,X-Linked-Size,X-Linked-ETag",
};

function filesUnder(folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out.push(relative(folder, path).split(sep).join("/"));
    }
  };
  walk(folder);
  return out.sort();
}

/**
 * Serves `repos` (hub id → folder on disk) on 127.0.0.1 in the hub's layout.
 *
 * @example
 * const hub = await startHubServer({ "evalrx/tiny-lm": "models/tiny-lm" });
 * await fetch(`${hub.url}/evalrx/tiny-lm/resolve/main/config.json`); // 200, application/json
 * await hub.close();
 */
export async function startHubServer(repos: Readonly<Record<string, string>>): Promise<HubServer> {
  const roots = new Map(Object.entries(repos).map(([id, folder]) => [id, resolve(folder)]));
  for (const [id, root] of roots)
    if (!existsSync(root) || !statSync(root).isDirectory())
      throw new Error(`hub server: repo '${id}' names ${root}, which is not a folder`);
  const requests: HubRequest[] = [];
  /** Content-addressed blobs the LFS redirects point at: sha256 → file. */
  const blobs = new Map<string, string>();

  const answer = (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body?: Buffer | string,
  ) => {
    requests.push({ method: req.method ?? "GET", url: req.url ?? "", status });
    res.writeHead(status, { ...CORS, ...headers });
    res.end(req.method === "HEAD" ? undefined : body);
  };
  const error = (req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string) =>
    answer(
      req,
      res,
      status,
      { "Content-Type": "application/json", "X-Error-Code": code, "X-Error-Message": message },
      JSON.stringify({ error: message }),
    );

  const serveFile = (req: IncomingMessage, res: ServerResponse, file: string) => {
    const bytes = readFileSync(file);
    const sha = createHash("sha256").update(bytes).digest("hex");
    const type = file.endsWith(".json") ? "application/json; charset=utf-8" : "application/octet-stream";
    answer(
      req,
      res,
      200,
      {
        "Content-Type": type,
        "Content-Length": String(bytes.length),
        ETag: `"${sha}"`,
        "Accept-Ranges": "bytes",
        "X-Repo-Commit": COMMIT,
      },
      bytes,
    );
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://hub.local");
    const path = decodeURIComponent(url.pathname);
    if (req.method === "OPTIONS") {
      requests.push({ method: "OPTIONS", url: req.url ?? "", status: 204 });
      res.writeHead(204, { ...CORS, "Access-Control-Allow-Methods": "GET, HEAD", "Access-Control-Allow-Headers": "*" });
      return res.end();
    }
    if (req.method !== "GET" && req.method !== "HEAD")
      return error(req, res, 405, "MethodNotAllowed", "GET or HEAD only");
    const blob = /^\/lfs\/([0-9a-f]{64})$/.exec(path);
    if (blob) {
      const file = blobs.get(blob[1]!);
      return file ? serveFile(req, res, file) : error(req, res, 404, "EntryNotFound", "Entry not found");
    }
    const api = /^\/api\/models\/([\w.-]+\/[\w.-]+)\/revision\/([^/]+)$/.exec(path);
    if (api) {
      const root = roots.get(api[1]!);
      if (!root) return error(req, res, 401, "RepoNotFound", "Repository not found");
      const body = JSON.stringify({
        id: api[1],
        sha: COMMIT,
        siblings: filesUnder(root).map((rfilename) => ({ rfilename })),
      });
      return answer(
        req,
        res,
        200,
        { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) },
        body,
      );
    }
    const resolveMatch = /^\/([\w.-]+\/[\w.-]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    if (!resolveMatch) return error(req, res, 404, "EntryNotFound", `no route ${path}`);
    const [, id, revision, file] = resolveMatch as unknown as [string, string, string, string];
    const root = roots.get(id);
    if (!root) return error(req, res, 401, "RepoNotFound", "Repository not found");
    if (revision !== "main") return error(req, res, 404, "RevisionNotFound", `Invalid rev id: ${revision}`);
    const target = resolve(root, file);
    if (
      !target.startsWith(root + sep) ||
      file.split("/").includes("..") ||
      !existsSync(target) ||
      !statSync(target).isFile()
    )
      return error(req, res, 404, "EntryNotFound", "Entry not found");
    const size = statSync(target).size;
    if (size >= LFS_BYTES) {
      const sha = createHash("sha256").update(readFileSync(target)).digest("hex");
      blobs.set(sha, target);
      return answer(req, res, 302, {
        Location: `/lfs/${sha}`,
        "X-Linked-Size": String(size),
        "X-Linked-ETag": `"${sha}"`,
        "X-Repo-Commit": COMMIT,
        "Content-Length": "0",
      });
    }
    serveFile(req, res, target);
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => done());
  });
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("hub server: no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
