import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Store } from "../../store/types.ts";
import { runCompanionEval, type EvalJobContext } from "./eval-job.ts";
import { ModelCache } from "./models.ts";
import { runCompanionInvestigation } from "./investigate-job.ts";
import { runCompanionCalibration } from "./calibrate-job.ts";
import { runCompanionExplore } from "./explore-job.ts";
import {
  COMPANION_NAME,
  JOB_KINDS,
  type CompanionStatus,
  type JobAccepted,
  type JobBody,
  type JobMessage,
} from "./protocol.ts";
import { listSpecs } from "../../models/specs/index.ts";

/** The only address the companion listens on: this machine's loopback, never a network interface. */
export const LOOPBACK = "127.0.0.1";

/** Where the page is served by default (`npm start`), and so where a pairing link points. */
export const DEFAULT_APP_URL = "http://localhost:4173/";

/** The app's own origins: the preview server (`npm start`) and the dev server (`npm run dev`), by either loopback name. */
export const APP_ORIGINS: readonly string[] = [
  "http://localhost:4173",
  "http://127.0.0.1:4173",
  "http://localhost:5173",
  "http://127.0.0.1:5173",
];

/** What `startCompanion` needs. */
export interface CompanionOptions {
  /** The port on 127.0.0.1 (0: any free one). */
  readonly port?: number;
  /** The pairing token (default: 32 random bytes; tests pass their own). */
  readonly token?: string;
  readonly store: Store;
  readonly dataRoot?: string;
  readonly modelsRoot?: string;
  /** The most jobs in flight at once; one more is answered 429 (default 2). */
  readonly maxJobs?: number;
  /** The largest request body (default 64 MiB); a larger one is answered 413. */
  readonly maxBodyBytes?: number;
  /** The page the pairing link opens (default http://localhost:4173/); its origin is allowed. */
  readonly appUrl?: string;
  /** More origins allowed besides the app's (e.g. where a team serves the app). */
  readonly allowOrigins?: readonly string[];
  /** Trials through a queue's workers instead of this process (see `src/node/queue`). */
  readonly trials?: EvalJobContext["trials"];
  /** How many trials a job keeps in flight through `trials`. */
  readonly trialsInFlight?: number;
  /** What `GET /status` says runs the trials. */
  readonly runner?: CompanionStatus["runner"];
  readonly version: string;
}

/** A running companion. */
export interface Companion {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** The link that pairs the page with this companion (the token travels in the fragment, never to a server). */
  readonly pairingUrl: string;
  close(): Promise<void>;
}

interface Job {
  readonly id: string;
  state: "running" | "finished" | "cancelled" | "failed";
  runId?: string;
  readonly messages: JobMessage[];
  readonly listeners: Set<ServerResponse>;
  readonly controller: AbortController;
  endedAt?: number;
}

/** A stream message before it is numbered (Omit over each member of the union). */
type Unsequenced = JobMessage extends infer M ? (M extends JobMessage ? Omit<M, "seq"> : never) : never;

/** Jobs kept after they end, so a page that reconnects late still reads their stream. */
const KEEP_ENDED = 32;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Reads a request body, refusing (413) one over `limit` bytes before it is all read. */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > limit) throw new HttpError(413, `the request body is ${declared} bytes, over the ${limit}-byte limit`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, `the request body is over the ${limit}-byte limit`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Starts the companion: an HTTP server on 127.0.0.1 that takes the paired
 * page's heavy jobs and streams their progress and store writes back.
 *
 * Sealed: the address is loopback only, always; a request whose Host is not
 * this loopback address is refused (403: DNS rebinding), as is one from an
 * origin other than the app's (403); every request but a CORS preflight needs
 * the token (`Authorization: Bearer …`, else 401); a body over the limit is
 * refused (413); beyond `maxJobs` jobs in flight a new one is answered 429
 * with `Retry-After`; datasets, images and models are read only inside the
 * folders named at start.
 *
 * @example const companion = await startCompanion({ store, version: "0.1.0" }); console.log(companion.pairingUrl)
 */
export async function startCompanion(options: CompanionOptions): Promise<Companion> {
  const token = options.token ?? randomBytes(32).toString("base64url");
  const tokenDigest = digest(token);
  const maxJobs = options.maxJobs ?? 2;
  const maxBody = options.maxBodyBytes ?? 64 * 1024 * 1024;
  const appUrl = new URL(options.appUrl ?? DEFAULT_APP_URL);
  const origins = new Set([...APP_ORIGINS, appUrl.origin, ...(options.allowOrigins ?? [])]);
  const models = new ModelCache();
  const jobs = new Map<string, Job>();
  let port = 0;
  let nextJob = 1;

  const running = () => [...jobs.values()].filter((j) => j.state === "running").length;

  const send = (job: Job, message: Unsequenced) => {
    const full = { ...message, seq: job.messages.length } as JobMessage;
    job.messages.push(full);
    const frame = `id: ${full.seq}\ndata: ${JSON.stringify(full)}\n\n`;
    for (const res of job.listeners) {
      res.write(frame);
      if (full.type === "end") res.end();
    }
    if (full.type === "end") job.listeners.clear();
  };

  const forget = () => {
    const ended = [...jobs.values()].filter((j) => j.endedAt !== undefined).sort((a, b) => a.endedAt! - b.endedAt!);
    for (const job of ended.slice(0, Math.max(0, ended.length - KEEP_ENDED))) jobs.delete(job.id);
  };

  const start = (body: JobBody): Job => {
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw new HttpError(400, "the request body must be a JSON object with a kind");
    if (!(JOB_KINDS as readonly string[]).includes(body.kind))
      throw new HttpError(
        400,
        `job kind ${JSON.stringify(body.kind)} is not one the companion runs; kinds are [${JOB_KINDS.map((k) => `'${k}'`).join(", ")}]`,
      );
    const job: Job = {
      id: `job-${nextJob++}-${randomBytes(4).toString("hex")}`,
      state: "running",
      messages: [],
      listeners: new Set(),
      controller: new AbortController(),
    };
    jobs.set(job.id, job);
    let lastProgress = 0;
    let lastStage: string | undefined;
    const context: EvalJobContext = {
      store: options.store,
      ...(options.dataRoot !== undefined ? { dataRoot: options.dataRoot } : {}),
      ...(options.modelsRoot !== undefined ? { modelsRoot: options.modelsRoot } : {}),
      models,
      ...(options.trials ? { trials: options.trials } : {}),
      ...(options.trialsInFlight !== undefined ? { trialsInFlight: options.trialsInFlight } : {}),
      signal: job.controller.signal,
      emit: (write) => {
        // The job's run is the first it creates (an investigation then creates its label, probe and repair runs).
        if (write.op === "createRun") job.runId ??= write.run.id;
        send(job, { type: "store", write });
      },
      emitLessons: (runId, lessons) => send(job, { type: "lessons", runId, lessons }),
      onProgress: (p) => {
        if (body.kind !== "calibrate") job.runId ??= p.runId;
        const now = Date.now();
        // Every store write already reaches the page; progress lines are for the eye, a few per second.
        // A new stage always goes through: it says what the job is doing, not how far it is.
        if (p.stage === lastStage && p.done < p.total && p.done > 0 && now - lastProgress < 100) return;
        lastProgress = now;
        lastStage = p.stage;
        send(job, { type: "progress", runId: p.runId, stage: p.stage, done: p.done, total: p.total });
      },
    };
    type Outcome = { runId?: string; status: string; summary?: unknown; verdicts?: unknown; result?: unknown };
    const work: Promise<Outcome> =
      body.kind === "investigate"
        ? runCompanionInvestigation(body, context)
        : body.kind === "calibrate"
          ? runCompanionCalibration(body, context).then((result) => ({ status: "finished", result }))
          : body.kind === "explore"
            ? runCompanionExplore(body, context)
            : runCompanionEval(body, context);
    work.then(
      (outcome) => {
        job.state = outcome.status === "cancelled" ? "cancelled" : "finished";
        job.runId = outcome.runId ?? job.runId;
        job.endedAt = Date.now();
        send(job, {
          type: "end",
          state: job.state,
          ...(job.runId !== undefined ? { runId: job.runId } : {}),
          status: outcome.status,
          ...(outcome.summary !== undefined ? { summary: outcome.summary } : {}),
          ...(outcome.verdicts !== undefined
            ? { verdicts: outcome.verdicts as { id: string; verdict: string }[] }
            : {}),
          ...(outcome.result !== undefined ? { result: outcome.result } : {}),
        });
        forget();
      },
      (error: unknown) => {
        job.state = job.controller.signal.aborted ? "cancelled" : "failed";
        job.endedAt = Date.now();
        send(job, {
          type: "end",
          state: job.state,
          ...(job.runId !== undefined ? { runId: job.runId } : {}),
          error: error instanceof Error ? error.message : String(error),
        });
        forget();
      },
    );
    return job;
  };

  const cors = (origin: string | undefined, res: ServerResponse) => {
    if (origin === undefined) return;
    res.setHeader("Access-Control-Allow-Origin", origin);
    res.setHeader("Vary", "Origin");
  };

  const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      "Content-Type": "application/json; charset=utf-8",
      "Cache-Control": "no-store",
      ...headers,
    });
    res.end(JSON.stringify(value));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // The Host a browser sends names where it thinks it is: anything but this loopback port is a rebinding attempt.
    const host = req.headers.host ?? "";
    if (host !== `${LOOPBACK}:${port}` && host !== `localhost:${port}`)
      throw new HttpError(403, `Host '${host.slice(0, 100)}' is not this companion (${LOOPBACK}:${port})`);
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin))
      throw new HttpError(
        403,
        `origin '${origin.slice(0, 100)}' may not use this companion; the app's origins are [${[...origins].join(", ")}]`,
      );
    cors(origin, res);
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "Access-Control-Allow-Methods": "GET, POST",
        "Access-Control-Allow-Headers": "authorization, content-type, last-event-id",
        "Access-Control-Allow-Private-Network": "true",
        "Access-Control-Max-Age": "600",
      });
      res.end();
      return;
    }
    const auth = req.headers.authorization ?? "";
    const given = auth.startsWith("Bearer ") ? auth.slice(7) : "";
    if (!given || !timingSafeEqual(digest(given), tokenDigest))
      throw new HttpError(
        401,
        given
          ? "wrong token; pair the page again with the link the companion printed"
          : "no token; pair the page with the link the companion printed",
        {
          "WWW-Authenticate": 'Bearer realm="evalrx-companion"',
        },
      );
    const url = new URL(req.url ?? "/", `http://${LOOPBACK}:${port}`);
    const parts = url.pathname.split("/").filter(Boolean);
    if (parts.length === 1 && parts[0] === "status") {
      if (req.method !== "GET") throw new HttpError(405, "status takes GET");
      const status: CompanionStatus = {
        name: COMPANION_NAME,
        version: options.version,
        jobs: { running: running(), max: maxJobs },
        runner: options.runner ?? { kind: "local" },
        models: listSpecs().map((s) => s.key),
      };
      return json(res, 200, status);
    }
    if (parts.length === 1 && parts[0] === "jobs") {
      if (req.method !== "POST") throw new HttpError(405, "jobs takes POST (a new job)");
      if (running() >= maxJobs)
        throw new HttpError(
          429,
          `${running()} jobs are running, the most this companion takes at once; try again shortly`,
          {
            "Retry-After": "5",
          },
        );
      const raw = await readBody(req, maxBody);
      let body: JobBody;
      try {
        body = JSON.parse(raw.toString("utf8")) as JobBody;
      } catch (error) {
        throw new HttpError(400, `the request body is not JSON: ${(error as Error).message}`);
      }
      const job = start(body);
      const accepted: JobAccepted = { id: job.id, events: `/jobs/${job.id}/events` };
      return json(res, 202, accepted);
    }
    const job = parts[0] === "jobs" && parts[1] !== undefined ? jobs.get(parts[1]) : undefined;
    if (parts[0] === "jobs" && parts.length >= 2 && !job) throw new HttpError(404, `no job '${parts[1]}'`);
    if (job && parts.length === 2) {
      if (req.method !== "GET") throw new HttpError(405, "a job takes GET");
      return json(res, 200, { id: job.id, state: job.state, runId: job.runId, messages: job.messages.length });
    }
    if (job && parts.length === 3 && parts[2] === "cancel") {
      if (req.method !== "POST") throw new HttpError(405, "cancel takes POST");
      job.controller.abort();
      return json(res, 202, { id: job.id, cancelled: job.state === "running" });
    }
    if (job && parts.length === 3 && parts[2] === "events") {
      if (req.method !== "GET") throw new HttpError(405, "events takes GET");
      const after = req.headers["last-event-id"] ?? url.searchParams.get("after") ?? "-1";
      const from = Number(after) + 1;
      if (!Number.isInteger(from) || from < 0)
        throw new HttpError(400, `after '${String(after).slice(0, 20)}' is not a message number`);
      res.writeHead(200, {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-store",
        Connection: "keep-alive",
      });
      for (const m of job.messages.slice(from)) res.write(`id: ${m.seq}\ndata: ${JSON.stringify(m)}\n\n`);
      if (job.state !== "running" && job.messages.at(-1)?.type === "end") {
        res.end();
        return;
      }
      job.listeners.add(res);
      res.on("close", () => job.listeners.delete(res));
      return;
    }
    throw new HttpError(404, `no such address: ${req.method} ${url.pathname}`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      const message = error instanceof Error ? error.message : String(error);
      if (res.headersSent) return void res.end();
      const headers = error instanceof HttpError ? error.headers : {};
      if (status === 413) {
        // The rest of the body is not read: Node closes the connection once the answer is out.
        json(res, status, { error: message }, { ...headers, Connection: "close" });
        return;
      }
      json(res, status, { error: message }, headers);
    });
  });
  server.requestTimeout = 0;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, LOOPBACK, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const url = `http://${LOOPBACK}:${port}`;
  const pairing = new URL(appUrl);
  pairing.hash = `#/pair?companion=${encodeURIComponent(url)}&token=${encodeURIComponent(token)}`;
  return {
    url,
    port,
    token,
    pairingUrl: pairing.toString(),
    async close() {
      for (const job of jobs.values()) job.controller.abort();
      const until = Date.now() + 5000;
      while (running() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      for (const job of jobs.values()) for (const res of job.listeners) res.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await models.dispose();
    },
  };
}
