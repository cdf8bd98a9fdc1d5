/**
 * The page's side of the companion protocol, with no DOM or Node import of
 * its own (it takes `fetch`): the page and the Node tests talk to a real
 * companion through this one client.
 */
import type { CompanionStatus, JobAccepted, JobBody, JobMessage, StoreOp } from "../../node/companion/protocol.ts";
import type { Store } from "../../store/types.ts";

/** A paired companion: where it listens and the token it printed. */
export interface Pairing {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly token: string;
}

/** A refusal or failure from the companion, with its HTTP status (and Retry-After seconds for a 429). */
export class CompanionError extends Error {
  override readonly name = "CompanionError";
  constructor(
    message: string,
    readonly status: number,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/**
 * Is `url` a companion address the page may talk to? Only this machine's
 * loopback, over http, with a port: anything else a link names is refused.
 *
 * @example companionAddress("http://127.0.0.1:7878/") // "http://127.0.0.1:7878"
 */
export function companionAddress(url: string): string | { reason: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { reason: `'${url.slice(0, 80)}' is not a URL` };
  }
  if (parsed.protocol !== "http:")
    return { reason: `the companion is reached over http on loopback, not ${parsed.protocol}` };
  if (parsed.hostname !== "127.0.0.1" && parsed.hostname !== "localhost")
    return { reason: `the companion listens on this machine's loopback (127.0.0.1), not on '${parsed.hostname}'` };
  if (!parsed.port) return { reason: "the companion address names no port" };
  if (parsed.pathname !== "/" || parsed.search || parsed.username || parsed.password)
    return { reason: "the companion address is only http://127.0.0.1:PORT" };
  return `http://${parsed.hostname}:${parsed.port}`;
}

/**
 * What does a pairing link (`#/pair?companion=…&token=…`) hold? The
 * companion's loopback address and its token, or why the link is not one.
 *
 * @example parsePairing("companion=http%3A%2F%2F127.0.0.1%3A7878&token=abc") // { url: "http://127.0.0.1:7878", token: "abc" }
 */
export function parsePairing(query: string): Pairing | { reason: string } {
  const params = new URLSearchParams(query.replace(/^\?/, ""));
  const url = params.get("companion");
  const token = params.get("token");
  if (!url) return { reason: "the pairing link names no companion (companion=http://127.0.0.1:PORT)" };
  if (!token) return { reason: "the pairing link has no token" };
  if (!/^[A-Za-z0-9_-]{16,256}$/.test(token))
    return { reason: "the pairing link's token is not one a companion prints" };
  const address = companionAddress(url);
  if (typeof address !== "string") return address;
  return { url: address, token };
}

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** Talks to one paired companion. */
export class CompanionClient {
  readonly pairing: Pairing;
  readonly #fetch: Fetch;

  constructor(pairing: Pairing, fetchImpl: Fetch = (input, init) => fetch(input, init)) {
    this.pairing = pairing;
    this.#fetch = fetchImpl;
  }

  async #call(path: string, init: RequestInit = {}): Promise<Response> {
    let response: Response;
    try {
      response = await this.#fetch(`${this.pairing.url}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${this.pairing.token}`, ...(init.headers as Record<string, string>) },
      });
    } catch (error) {
      throw new CompanionError(
        `the companion at ${this.pairing.url} cannot be reached (${(error as Error).message}); is 'evalrx companion' running?`,
        0,
      );
    }
    if (!response.ok) {
      let message = `${response.status} ${response.statusText}`;
      try {
        message = ((await response.json()) as { error?: string }).error ?? message;
      } catch {
        // Not JSON: keep the status line.
      }
      const retry = Number(response.headers.get("Retry-After"));
      throw new CompanionError(message, response.status, Number.isFinite(retry) && retry > 0 ? retry : undefined);
    }
    return response;
  }

  /** The companion's name, version, jobs and runner; throws a CompanionError when it is not reachable or refuses. */
  async status(): Promise<CompanionStatus> {
    return (await (await this.#call("/status")).json()) as CompanionStatus;
  }

  /** Starts a job; resolves once the companion has accepted it. */
  async start(body: JobBody): Promise<JobAccepted> {
    const response = await this.#call("/jobs", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    return (await response.json()) as JobAccepted;
  }

  /** Asks the companion to stop job `id` (what it judged is kept, and was already sent). */
  async cancel(id: string): Promise<void> {
    await this.#call(`/jobs/${encodeURIComponent(id)}/cancel`, { method: "POST" });
  }

  /**
   * The job's stream, message by message, from the one after `after`, until
   * its `end`. A dropped connection is picked up again from the last message
   * seen (a few times, then it throws).
   */
  async *messages(id: string, after = -1, signal?: AbortSignal): AsyncGenerator<JobMessage> {
    let last = after;
    let failures = 0;
    for (;;) {
      let ended = false;
      try {
        const response = await this.#call(`/jobs/${encodeURIComponent(id)}/events?after=${last}`, {
          ...(signal ? { signal } : {}),
        });
        const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let cut: number;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const frame = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const data = frame
              .split("\n")
              .filter((line) => line.startsWith("data: "))
              .map((line) => line.slice(6))
              .join("\n");
            if (!data) continue;
            const message = JSON.parse(data) as JobMessage;
            if (message.seq <= last) continue;
            last = message.seq;
            failures = 0;
            yield message;
            if (message.type === "end") ended = true;
          }
        }
      } catch (error) {
        if (signal?.aborted || (error instanceof CompanionError && error.status >= 400)) throw error;
        if (++failures > 5) throw error;
        await new Promise((r) => setTimeout(r, 200 * failures));
        continue;
      }
      if (ended) return;
      if (++failures > 5) throw new CompanionError(`the companion's stream of job ${id} stopped before its end`, 0);
    }
  }
}

/**
 * Makes one of the companion's store writes in the page's store, so the page
 * holds the records it would have written had it run the job itself: runs,
 * items with their progress marker in one atomic write (the page's resume
 * rules hold as they are), and events with the same `seq` and `ts`.
 *
 * @example for await (const m of client.messages(id)) if (m.type === "store") await applyStoreOp(store, m.write)
 */
export async function applyStoreOp(store: Store, op: StoreOp): Promise<void> {
  switch (op.op) {
    case "createRun":
      return store.createRun(op.run);
    case "updateRun":
      return store.updateRun(op.id, op.changes);
    case "appendItems":
      return store.appendItems(op.runId, op.items, op.progress);
    case "putScores":
      return store.putScores(op.scores);
    case "appendEvents": {
      const stored = await store.appendEvents(
        op.runId,
        op.events.map(({ stage, schema, type, payload, ts }) => ({ stage, schema, type, payload, ts })),
      );
      const want = op.events[0]?.seq;
      if (want !== undefined && stored[0]?.seq !== want)
        throw new Error(
          `run '${op.runId}': the companion's event ${want} arrived as this store's event ${stored[0]?.seq}; the two logs are out of step`,
        );
      return;
    }
  }
}
