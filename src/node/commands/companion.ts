import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "../cli.ts";
import { DEFAULT_STORE, numberOption, openStore, parseCommandArgs } from "../eval-runs.ts";
import { DEFAULT_APP_URL, startCompanion } from "../companion/server.ts";
import type { TrialQueue } from "../queue/trials.ts";

const usage = `evalrx companion [--port N] [--models DIR] [--data DIR] [--store DIR] [--queue redis://HOST:PORT]
                 [--batch N] [--max-jobs N] [--app URL] [--allow-origin ORIGIN]...

  Listens on 127.0.0.1 only and prints, once, a pairing link with a random token: open it in the page
  (default app ${DEFAULT_APP_URL}; --app names another) and the page can hand its evals to this process,
  which runs them on onnxruntime-node and streams every judged item back into the page's store.
  --models and --data are the only folders a job may read models and datasets from (bundled models are
  always allowed). --queue sends each trial to a BullMQ queue on that Redis, for 'evalrx worker' processes
  (on any machine) to run, --batch trials to a work item (default 8). Stop it with Ctrl-C.`;

function folder(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const path = resolve(value);
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info) throw new Error(`${flag} '${value}' does not exist`);
  if (!info.isDirectory()) throw new Error(`${flag} '${value}' is not a folder`);
  return path;
}

export const command: Command = {
  summary: "serve the paired page's heavy jobs on this machine (loopback only, token, origin-checked)",
  usage,
  async run(args) {
    const { values } = parseCommandArgs(
      args,
      {
        port: { type: "string" },
        models: { type: "string" },
        data: { type: "string" },
        store: { type: "string" },
        queue: { type: "string" },
        batch: { type: "string" },
        "max-jobs": { type: "string" },
        app: { type: "string" },
        "allow-origin": { type: "string", multiple: true },
      },
      usage,
    );
    const port = numberOption("port", values.port, "7878") ?? 0;
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port ${port} is not a port (0–65535)`);
    const maxJobs = numberOption("max-jobs", values["max-jobs"], "2") ?? 2;
    if (!Number.isInteger(maxJobs) || maxJobs < 1) throw new Error(`--max-jobs ${maxJobs} must be a positive integer`);
    if (values.app !== undefined) {
      try {
        new URL(values.app);
      } catch {
        throw new Error(`--app '${values.app}' is not a URL (e.g. http://localhost:4173/)`);
      }
    }
    for (const origin of values["allow-origin"] ?? [])
      if (!/^https?:\/\/[^/]+$/.test(origin))
        throw new Error(`--allow-origin '${origin}' is not an origin (e.g. https://evalrx.example.org)`);
    const store = await openStore(values.store ?? DEFAULT_STORE);
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    const batch = numberOption("batch", values.batch, "8") ?? 8;
    if (!Number.isInteger(batch) || batch < 1 || batch > 1000)
      throw new Error(`--batch ${batch} must be a whole number of trials per work item, 1 to 1000`);
    if (values.batch !== undefined && values.queue === undefined)
      throw new Error("--batch sets the trials per queue work item; it needs --queue redis://HOST:PORT");
    let queue: TrialQueue | undefined;
    if (values.queue !== undefined) {
      const { openTrialQueue } = await import("../queue/trials.ts");
      queue = await openTrialQueue(values.queue, { warn: (line) => console.error(line), batch });
    }
    const dataRoot = folder("--data", values.data);
    const modelsRoot = folder("--models", values.models);
    const companion = await startCompanion({
      port,
      store,
      ...(dataRoot !== undefined ? { dataRoot } : {}),
      ...(modelsRoot !== undefined ? { modelsRoot } : {}),
      maxJobs,
      ...(values.app !== undefined ? { appUrl: values.app } : {}),
      ...(values["allow-origin"] ? { allowOrigins: values["allow-origin"] } : {}),
      ...(queue
        ? {
            trials: queue.trials,
            trialsInFlight: queue.inFlight,
            runner: { kind: "queue" as const, redis: queue.address },
          }
        : {}),
      version: pkg.version,
    });
    console.log(`evalrx companion ${pkg.version} listening on ${companion.url} (loopback only)`);
    console.log(`pair the page by opening: ${companion.pairingUrl}`);
    if (queue)
      console.log(
        `trials go to the queue on ${queue.address}; add workers with: evalrx worker --queue ${queue.address}`,
      );
    await new Promise<void>((resolveStop) => {
      const stop = () => resolveStop();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    console.error("companion: stopping (running jobs are cancelled; what they judged is kept)");
    await companion.close();
    await queue?.close();
    await store.close();
    return 0;
  },
};
