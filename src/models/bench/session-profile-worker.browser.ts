/// <reference lib="webworker" />
/** The in-worker half of the session profile: tiny-vlm on ONNX Runtime Web (WASM) with `threads` threads. */
import { loadOrtModel, type OrtModel } from "../ort-model.ts";
import { configureOrtWasm } from "../ort-env.browser.ts";
import { fetchFiles, webSessions } from "../ort-session.browser.ts";
import type { ModelInput } from "../../core/model.ts";
import { profiledSessions, type SessionProfile } from "./session-profile.ts";
import { runWorkload } from "./session-profile-workload.ts";

const ort = configureOrtWasm();
let model: OrtModel | undefined;
const profile: SessionProfile = {};

self.onmessage = async (event: MessageEvent<{ inputs: ModelInput[]; rounds: number; threads: number }>) => {
  try {
    if (!model) {
      ort.env.wasm.numThreads = event.data.threads;
      model = await loadOrtModel(
        fetchFiles(new URL(`${import.meta.env.BASE_URL}models/tiny-vlm/`, self.location.origin).href),
        profiledSessions(webSessions("wasm"), profile),
        { key: "tiny-vlm" },
      );
    }
    for (const key of Object.keys(profile)) delete profile[key];
    const times = await runWorkload(model, event.data.inputs, event.data.rounds);
    self.postMessage({ times, profile, threads: ort.env.wasm.numThreads, isolated: self.crossOriginIsolated });
  } catch (error) {
    self.postMessage({ error: String((error as Error)?.message ?? error) });
  }
};
