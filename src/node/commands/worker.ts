import { resolve } from "node:path";
import { statSync } from "node:fs";
import type { Command } from "../cli.ts";
import { numberOption, parseCommandArgs } from "../eval-runs.ts";

const usage = `evalrx worker --queue redis://HOST:PORT [--models DIR] [--concurrency N] [--lock-seconds S]

  Runs the trials a companion started with --queue puts on that Redis (BullMQ), on this machine's
  onnxruntime-node with one intra-op thread: one core per worker, so start as many as there are cores,
  on as many machines as share the Redis. A worker holds --concurrency work items at once (default 2):
  the model runs one at a time, and the next item is fetched with its images while it runs. A worker
  killed mid-item has its items retried by the others after --lock-seconds (default 30). Models are
  bundled keys or folders under --models. Stop it with Ctrl-C: it finishes the items it holds (a
  second Ctrl-C stops it at once, and its items are retried by the others).`;

export const command: Command = {
  summary: "add a consumer to a companion's BullMQ queue (runs its trials on this machine)",
  usage,
  async run(args) {
    const { values } = parseCommandArgs(
      args,
      {
        queue: { type: "string" },
        models: { type: "string" },
        concurrency: { type: "string" },
        "lock-seconds": { type: "string" },
      },
      usage,
    );
    if (values.queue === undefined) throw new Error("--queue redis://HOST:PORT is required (the companion's queue)");
    // Absent: the worker's own default (HELD_ITEMS in queue/worker.ts, loaded only when a worker starts).
    const concurrency = numberOption("concurrency", values.concurrency, "2");
    if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1))
      throw new Error(`--concurrency ${concurrency} must be a positive integer`);
    const lockSeconds = numberOption("lock-seconds", values["lock-seconds"], "30") ?? 30;
    if (!(lockSeconds >= 0.5 && lockSeconds <= 3600))
      throw new Error(`--lock-seconds ${lockSeconds} must be between 0.5 and 3600`);
    let modelsRoot: string | undefined;
    if (values.models !== undefined) {
      modelsRoot = resolve(values.models);
      if (!statSync(modelsRoot, { throwIfNoEntry: false })?.isDirectory())
        throw new Error(`--models '${values.models}' is not a folder`);
    }
    const { startTrialWorker } = await import("../queue/worker.ts");
    const worker = await startTrialWorker(values.queue, {
      ...(modelsRoot !== undefined ? { modelsRoot } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      lockMs: Math.round(lockSeconds * 1000),
    });
    console.error(`evalrx worker ${process.pid}: taking trials from ${values.queue}`);
    await new Promise<void>((done) => {
      process.once("SIGINT", () => done());
      process.once("SIGTERM", () => done());
    });
    await worker.close();
    console.error(
      `evalrx worker ${process.pid}: stopped after ${worker.trials()} trial(s) in ${worker.answered()} work item(s)`,
    );
    return 0;
  },
};
