import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A throwaway Redis for a test or a benchmark: its own port on loopback, its own folder, nothing saved. */
export interface ThrowawayRedis {
  readonly url: string;
  readonly port: number;
  /** The redis-server process (a benchmark reads its CPU time). */
  readonly pid: number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts Debian's `redis-server` on a free loopback port with a temporary
 * folder, no persistence and `noeviction` (what the queue requires), and
 * resolves once it accepts connections. Throws, saying how to install it,
 * when `redis-server` is not on the PATH.
 *
 * @example const redis = await startRedis(); … await redis.stop()
 */
export async function startRedis(extra: readonly string[] = []): Promise<ThrowawayRedis> {
  const dir = mkdtempSync(join(tmpdir(), "evalrx-redis-"));
  const port = await freePort();
  const child: ChildProcess = spawn(
    "redis-server",
    [
      "--bind",
      "127.0.0.1",
      "--port",
      String(port),
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "no",
      "--maxmemory-policy",
      "noeviction",
      ...extra,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(
      () => reject(new Error(`redis-server did not start within 10 s: ${out.slice(-500)}`)),
      10_000,
    );
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(
        new Error(`cannot start redis-server (${error.message}); install Debian's: apt-get install -y redis-server`, {
          cause: error,
        }),
      );
    });
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${out.slice(-500)}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
