import { Redis } from "ioredis";

/** Where the queue's Redis is, parsed from `redis://[:password@]host:port[/db]`. */
export interface RedisAddress {
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly password?: string;
  readonly username?: string;
  /** The address without credentials, safe to print. */
  readonly shown: string;
}

/**
 * Which Redis does `--queue` name? Accepts `redis://host:port` (port
 * default 6379) with an optional `/db` number and credentials; anything else
 * is refused with what was expected.
 *
 * @example parseRedisUrl("redis://127.0.0.1:6380/2") // { host: "127.0.0.1", port: 6380, db: 2, shown: "redis://127.0.0.1:6380/2" }
 */
export function parseRedisUrl(text: string): RedisAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--queue '${text}' is not a URL; give redis://HOST:PORT (e.g. redis://127.0.0.1:6379)`);
  }
  if (url.protocol !== "redis:")
    throw new Error(`--queue '${text}' is not a redis:// URL (e.g. redis://127.0.0.1:6379)`);
  if (!url.hostname) throw new Error(`--queue '${text}' names no host`);
  const port = url.port ? Number(url.port) : 6379;
  const path = url.pathname.replace(/^\//, "");
  const db = path === "" ? 0 : Number(path);
  if (!Number.isInteger(db) || db < 0) throw new Error(`--queue '${text}': the database '${path}' is not a number`);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return {
    host,
    port,
    db,
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    shown: `redis://${url.host}${db ? `/${db}` : ""}`,
  };
}

/** ioredis options for BullMQ (it needs `maxRetriesPerRequest: null` on the blocking connections). */
export function connectionOptions(address: RedisAddress) {
  return {
    host: address.host,
    port: address.port,
    db: address.db,
    ...(address.password !== undefined ? { password: address.password } : {}),
    ...(address.username !== undefined ? { username: address.username } : {}),
    maxRetriesPerRequest: null,
  };
}

/**
 * Does this Redis keep every key until it is deleted? A queue's jobs are its
 * keys: under any eviction policy a full Redis silently drops work items.
 * Refuses (throws) a Redis whose `maxmemory-policy` is not `noeviction`, and
 * says how to set it; where `CONFIG` is disabled (a managed Redis) it cannot
 * tell, and warns instead.
 *
 * @example await requireNoEviction(address, console.warn) // resolves for a Redis started with --maxmemory-policy noeviction
 */
export async function requireNoEviction(address: RedisAddress, warn: (line: string) => void): Promise<void> {
  const redis = new Redis({ ...connectionOptions(address), maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    try {
      await redis.connect();
    } catch (error) {
      throw new Error(`cannot reach Redis at ${address.shown}: ${(error as Error).message}`, { cause: error });
    }
    let policy: string | undefined;
    try {
      const answer = (await redis.call("CONFIG", "GET", "maxmemory-policy")) as string[];
      policy = answer[1];
    } catch (error) {
      warn(
        `warning: cannot read Redis's maxmemory-policy at ${address.shown} (${(error as Error).message}); make sure it is 'noeviction', or work items may be dropped when it fills`,
      );
      return;
    }
    if (policy !== "noeviction")
      throw new Error(
        `Redis at ${address.shown} evicts keys when full (maxmemory-policy '${policy}'), which would drop queued work items; ` +
          "set it to keep them: redis-cli CONFIG SET maxmemory-policy noeviction (or maxmemory-policy noeviction in redis.conf)",
      );
  } finally {
    redis.disconnect();
  }
}
