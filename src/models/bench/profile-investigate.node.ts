/**
 * The demo investigation as `evalrx investigate` runs it (seed 1, holdout 0.4, ceiling L3b), with every session
 * run, model call and store call counted and timed: where the CLI's time goes, to set beside the page's.
 * `npx tsx src/models/bench/profile-investigate.node.ts`; with `MEMO=1` the sessions are memoised as the page's
 * are (`memoSessions`), and each session's memo is printed at the end of each stage.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { investigate } from "../../agent/investigate.ts";
import type { ImagePixels } from "../../core/index.ts";
import { importDataset } from "../../datasets/index.ts";
import { labelEvaluators } from "../../evals/label-evaluators.ts";
import { toRgb } from "../image.ts";
import { loadOrtModel } from "../ort-model.ts";
import { nodeFiles, nodeSessions } from "../ort-session.node.ts";
import { REPO_ROOT } from "../load.node.ts";
import { FileStore } from "../../store/files.node.ts";
import { memoSessions, type MemoSession } from "../session-memo.ts";
import type { SessionFactory } from "../session.ts";
import { profiledObject, profiledSessions, profileLines, type SessionProfile } from "./session-profile.ts";

const rgba = (bytes: Uint8Array | ImagePixels): ImagePixels => {
  const rgb = toRgb(bytes);
  const data = new Uint8ClampedArray(rgb.width * rgb.height * 4).fill(255);
  for (let i = 0; i < rgb.width * rgb.height; i++) data.set(rgb.rgb.subarray(i * 3, i * 3 + 3), i * 4);
  return { width: rgb.width, height: rgb.height, data };
};

const profile: SessionProfile = {};
const memos: [string, MemoSession][] = [];
const memoised = memoSessions(profiledSessions(nodeSessions, profile));
const factory: SessionFactory = process.env["MEMO"]
  ? async (bytes, o) => {
      const s = (await memoised(bytes, o)) as MemoSession;
      memos.push([o.name, s]);
      return s;
    }
  : profiledSessions(nodeSessions, profile);
const dir = mkdtempSync(join(tmpdir(), "evalrx-profile-"));
try {
  const imported = await importDataset(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl")), { name: "pope.jsonl" });
  const cases = imported.cases;
  const model = profiledObject(
    await loadOrtModel(nodeFiles(`${REPO_ROOT}models/tiny-vlm`), factory, {
      key: "tiny-vlm",
    }),
    profile,
    "model",
  );
  const store = profiledObject(await FileStore.open(join(dir, "store")), profile, "store");
  const stages: string[] = [];
  const t0 = performance.now();
  const { loop } = await investigate({
    store,
    model,
    dataset: { id: "pope", cases, source: "pope.jsonl", fingerprint: "profile" },
    evaluators: labelEvaluators(cases),
    images: async (ref) => new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", ref))),
    decodeImage: rgba,
    protocol: { question: "What predicts the hallucinations?" },
    runId: "profile",
    holdout: 0.4,
    seed: 1,
    alpha: 0.05,
    maxTier: "L3b",
    modelInfo: { key: "tiny-vlm" },
    sink: (e) => {
      if (e.type === "stage.finished")
        for (const [n, m] of memos) console.log(String(e.payload["stage"]), n, JSON.stringify(m.memo()));
      if (e.type === "stage.finished")
        stages.push(`${String(e.payload["stage"])} ${(Number(e.payload["ms"]) / 1000).toFixed(1)}`);
    },
  });
  console.log(`load ${readFileSync("/proc/loadavg", "utf8").trim()}`);
  console.log(`PROFILE total ${(performance.now() - t0).toFixed(0)} ms; stages ${stages.join(" · ")}`);
  console.log(loop.verified.map((v) => `${v.id} ${v.verdict}`).join(", "));
  for (const l of profileLines(profile)) console.log(l);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
