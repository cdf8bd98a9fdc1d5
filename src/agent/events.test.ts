import { describe, expect, it } from "vitest";
import { EventLog, parseEventLines } from "./events.ts";

describe("parseEventLines: reading events.jsonl back", () => {
  const log = new EventLog({ runId: "r1", now: () => 0 });
  log.append("setup", "run.started", { kind: "explore" });
  log.append("M2", "signal.tested", { signal: "x", p: NaN });
  const text = log.events.map((e) => JSON.stringify(e)).join("\n") + "\n";

  it("reads every event as it was logged (NaN logged as null)", () => {
    const events = parseEventLines(text);
    expect(events).toEqual(log.events);
    expect(events[1]!.payload).toEqual({ signal: "x", p: null });
  });

  it("drops a torn last line (a killed process), but a torn line before others is corruption", () => {
    expect(parseEventLines(text + '{"runId":"r1","se')).toHaveLength(2);
    expect(parseEventLines(text + '{"runId":"r1","se\n\n')).toHaveLength(2);
    expect(() => parseEventLines('{"runId":"r1","se\n' + text)).toThrow(/line 1: not JSON; the log is corrupt/);
  });
});
