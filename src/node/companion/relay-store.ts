import type { Store } from "../../store/types.ts";
import type { StoreOp } from "./protocol.ts";

/** The writes a relayed job may make; the page repeats each of them in IndexedDB. */
const RELAYED = new Set(["createRun", "updateRun", "appendEvents", "appendItems", "putScores"]);
/** Writes the page could not repeat: a job that makes one fails loudly instead of losing it. */
const REFUSED = new Set(["putDataset", "addCases", "deleteDataset", "putImage", "deleteRun", "putTraces", "importRun"]);

/**
 * Which writes did a job make, in order? A store that does everything
 * `inner` does and hands each run write (as it was stored: events with their
 * `seq` and `ts`) to `emit` once `inner` has it, so the page can make the same
 * writes to its own store and hold the records it would have written itself.
 * Reads and locks go to `inner` untouched; a write the page could not repeat
 * (datasets, images, traces) is refused by name.
 *
 * @example const store = relayStore(await FileStore.open(dir), (op) => send({ type: "store", write: op }))
 */
export function relayStore(inner: Store, emit: (op: StoreOp) => void): Store {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== "string" || typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      if (REFUSED.has(prop))
        return () =>
          Promise.reject(
            new Error(`the companion does not relay ${prop}() to the page; this job cannot run on the companion`),
          );
      if (!RELAYED.has(prop)) return method.bind(target);
      return async (...args: unknown[]) => {
        const result = await method.apply(target, args);
        if (prop === "createRun") emit({ op: "createRun", run: args[0] as never });
        else if (prop === "updateRun") emit({ op: "updateRun", id: args[0] as string, changes: args[1] as never });
        else if (prop === "putScores") emit({ op: "putScores", scores: args[0] as never });
        else if (prop === "appendEvents")
          emit({ op: "appendEvents", runId: args[0] as string, events: result as never });
        else emit({ op: "appendItems", runId: args[0] as string, items: args[1] as never, progress: args[2] as never });
        return result;
      };
    },
  });
}
