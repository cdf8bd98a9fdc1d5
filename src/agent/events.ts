/**
 * The run's event log: every stage of the diagnosis loop appends what it did,
 * and the report is folded from these events alone. An event carries its
 * sequence number, a timestamp and the schema version, so a log read back from
 * a file can be checked against `events.schema.json` and replayed.
 */

/** Bumped whenever an event's shape changes incompatibly; stored in every event. */
export const EVENT_SCHEMA_VERSION = 1;

/** The stages a run goes through, in order. */
export type Stage = "setup" | "M1" | "M2" | "M3" | "M4" | "M5" | "report";

/**
 * One line of the log, shaped like the store's `EventRecord` so it can be kept
 * there as is. `payload` depends on `type`; `events.schema.json` gives each type's fields.
 */
export interface RunEvent<T extends string = string, D = Record<string, unknown>> {
  readonly runId: string;
  readonly seq: number;
  readonly ts: string;
  readonly stage: Stage;
  /** `EVENT_SCHEMA_VERSION` when written. */
  readonly schema: number;
  readonly type: T;
  readonly payload: D;
}

export interface EventLogOptions {
  /** Identifies the run in every event. */
  readonly runId: string;
  /** Current time; injected so tests and resumed runs are reproducible. Defaults to `Date.now`. */
  readonly now?: () => number;
  /** Called synchronously with each appended event (e.g. to append it to `events.jsonl`). */
  readonly sink?: (event: RunEvent) => void;
  /** Events of an earlier, interrupted run to continue from (`--resume`). */
  readonly previous?: readonly RunEvent[];
}

/**
 * An append-only log of run events.
 *
 * Example: `const log = new EventLog({ runId: "r1" }); log.append("M2", "signal.tested", { signal: "x" });`
 * then `log.events[0].seq === 0`.
 */
export class EventLog {
  readonly runId: string;
  private readonly list: RunEvent[];
  private readonly now: () => number;
  private readonly sink?: (event: RunEvent) => void;

  constructor(options: EventLogOptions) {
    if (!options.runId) throw new Error("EventLog: a non-empty runId is required (e.g. 'explore-20261130-1')");
    this.runId = options.runId;
    this.now = options.now ?? (() => Date.now());
    this.sink = options.sink;
    this.list = [...(options.previous ?? [])];
    this.list.forEach((event, i) => {
      if (event.seq !== i)
        throw new Error(`EventLog: previous events must be numbered 0.. without gaps; event ${i} has seq ${event.seq}`);
    });
  }

  /** Every event so far, oldest first. */
  get events(): readonly RunEvent[] {
    return this.list;
  }

  /** Appends one event and hands it to the sink; returns it. */
  append<D extends Record<string, unknown>>(stage: Stage, type: string, data: D): RunEvent<string, D> {
    const event: RunEvent<string, D> = {
      runId: this.runId,
      seq: this.list.length,
      ts: new Date(this.now()).toISOString(),
      stage,
      schema: EVENT_SCHEMA_VERSION,
      type,
      payload: toJsonSafe(data) as D,
    };
    this.list.push(event);
    this.sink?.(event);
    return event;
  }

  /** The first event of `type`, or undefined. */
  find(type: string): RunEvent | undefined {
    return this.list.find((event) => event.type === type);
  }

  /** Every event of `type`, in order. */
  all(type: string): RunEvent[] {
    return this.list.filter((event) => event.type === type);
  }
}

/**
 * Makes a value JSON-faithful before it is logged: non-finite numbers become
 * null (JSON has no NaN), typed arrays become plain arrays, undefined fields go.
 * A logged event must read back from a file exactly as it was written.
 */
export function toJsonSafe(value: unknown): unknown {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (value === null || typeof value !== "object") return value;
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>, (x) => toJsonSafe(x));
  if (Array.isArray(value)) return value.map((x) => (x === undefined ? null : toJsonSafe(x)));
  const out: Record<string, unknown> = {};
  for (const [key, x] of Object.entries(value)) if (x !== undefined) out[key] = toJsonSafe(x);
  return out;
}

/**
 * Parses an `events.jsonl` text into events, checking the envelope of each line.
 * Example: `parseEventLines('{"runId":"r","seq":0,…}\n')` → one event.
 */
export function parseEventLines(text: string): RunEvent[] {
  const events: RunEvent[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      // A process killed mid-write leaves a torn last line; anything earlier is corruption.
      if (lines.slice(i + 1).every((l) => !l.trim())) return;
      throw new Error(`events.jsonl line ${i + 1}: not JSON; the log is corrupt (delete it to start over)`);
    }
    const e = parsed as Partial<RunEvent>;
    if (
      typeof e.seq !== "number" ||
      typeof e.type !== "string" ||
      typeof e.schema !== "number" ||
      typeof e.payload !== "object"
    )
      throw new Error(`events.jsonl line ${i + 1}: expected an event {runId, seq, ts, stage, schema, type, payload}`);
    if (e.schema !== EVENT_SCHEMA_VERSION)
      throw new Error(
        `events.jsonl line ${i + 1}: schema version ${e.schema}, this evalrx reads ${EVENT_SCHEMA_VERSION}; start a new run`,
      );
    events.push(parsed as RunEvent);
  });
  return events;
}
