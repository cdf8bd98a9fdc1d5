import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EventLog } from "../events.ts";
import { LessonFile } from "./lesson-file.node.ts";
import type { Lesson } from "./lessons.ts";
import { readLessons, reorderAnalyzers, reorderSignals, type LessonStore } from "./lessons-loop.ts";

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 11, 1, 12);

function lesson(kind: Lesson["kind"], subject: string, at: number, model = "tiny-vlm"): Lesson {
  return {
    id: `run-a:${kind}:${subject}`,
    kind,
    subject,
    text: `${subject} was ${kind}`,
    runId: "run-a",
    model: { key: model, family: model === "tiny-vlm" ? "llava" : "gpt2" },
    dataset: { fingerprint: "fp1", source: "pope.jsonl" },
    at: new Date(at).toISOString(),
  };
}

function fileStore(): { store: LessonStore; file: LessonFile } {
  const file = new LessonFile(join(mkdtempSync(join(tmpdir(), "evalrx-lessons-")), "lessons.jsonl"));
  return { file, store: { where: file.path, read: () => file.read(), append: (l) => file.append(l) } };
}

const context = { model: { key: "tiny-vlm", family: "llava" }, dataset: { fingerprint: "fp1", source: "pope.jsonl" } };

describe("lessons in the loop, over the JSONL store", () => {
  it("decays with a 30-day half-life on an injected clock, and logs what it used", async () => {
    const { store, file } = fileStore();
    file.append([lesson("supported", "sink.mass.pooled", T0), lesson("refuted", "rollout.entropy", T0)]);
    const at = async (days: number) => {
      const log = new EventLog({ runId: `r${days}`, now: () => T0 + days * DAY });
      const read = await readLessons(store, context, log, new Date(T0 + days * DAY));
      return { read, event: log.find("lessons.used")! };
    };
    const now = await at(0);
    const month = await at(30);
    const twoMonths = await at(60);
    const weight = (r: typeof now) => r.read.ranked.find((x) => x.lesson.subject === "sink.mass.pooled")!.weight;
    expect(weight(now)).toBeCloseTo(1, 10);
    expect(weight(month)).toBeCloseTo(0.5, 10);
    expect(weight(twoMonths)).toBeCloseTo(0.25, 10);
    expect(now.read.priors.get("rollout.entropy")).toBeCloseTo(-1, 10);
    expect((month.event.payload.used as { id: string }[]).map((u) => u.id)).toEqual([
      "run-a:refuted:rollout.entropy",
      "run-a:supported:sink.mass.pooled",
    ]);
    expect(month.event.payload.use).toMatch(/ordering only/);
  });

  it("orders analyzers and hypotheses by the lessons, keeps the given order without them, and skips unrelated runs", async () => {
    const { store, file } = fileStore();
    file.append([
      lesson("supported", "sink.mass.pooled", T0),
      lesson("refuted", "attention.imageShare.L0", T0),
      lesson("supported", "tokenEntropy.answer", T0, "another-model"),
    ]);
    const log = new EventLog({ runId: "r", now: () => T0 });
    const read = await readLessons(
      store,
      { ...context, dataset: { fingerprint: "fp2", source: "other.jsonl" } },
      log,
      new Date(T0),
    );
    // Same model, other data: relevance ½; a lesson of another model on other data is left out.
    expect(read.ranked.map((r) => r.relevance)).toEqual([0.5, 0.5]);
    const analyzers = ["attention", "attentionSink", "tokenEntropy"].map((name) => ({ analyzer: { name } }));
    expect(reorderAnalyzers(read)(analyzers).map((a) => a.analyzer.name)).toEqual([
      "attentionSink",
      "tokenEntropy",
      "attention",
    ]);
    const findings = ["attention.imageShare.L0", "tokenEntropy.answer", "sink.mass.pooled"].map((signal) => ({
      signal,
    }));
    expect(reorderSignals(read)(findings).map((f) => f.signal)).toEqual([
      "sink.mass.pooled",
      "tokenEntropy.answer",
      "attention.imageShare.L0",
    ]);
    const empty = fileStore();
    const none = await readLessons(empty.store, context, new EventLog({ runId: "e" }), new Date(T0));
    expect(reorderAnalyzers(none)(analyzers)).toEqual(analyzers);
  });

  it("a bad line in the store is named in the log and the lessons around it are kept", async () => {
    const { store, file } = fileStore();
    file.append([lesson("supported", "sink.mass.pooled", T0)]);
    const text = readFileSync(file.path, "utf8");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(file.path, `${text}{"id": 3}\n${JSON.stringify(lesson("refuted", "rollout.entropy", T0))}\n`);
    const log = new EventLog({ runId: "r" });
    const read = await readLessons(store, context, log, new Date(T0));
    expect(read.ranked).toHaveLength(2);
    expect(log.find("lessons.used")!.payload.problems).toEqual([
      expect.stringMatching(/lessons\.jsonl:2: not a lesson/),
    ]);
  });
});
