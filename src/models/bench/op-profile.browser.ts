/**
 * The page half of `npm run bench:ops`: the bundled tiny-vlm on ONNX Runtime Web (WASM) with every session
 * profiled, `forwards` forwards of one input; then single-operator graphs, each profiled alone. The WASM build
 * prints each profile event to the console, where the Node half reads them.
 */
import type { ModelInput } from "../../core/model.ts";
import { configureOrtWasm } from "../ort-env.browser.ts";
import { loadOrtModel } from "../ort-model.ts";
import { fetchFiles } from "../ort-session.browser.ts";
import { wrapOrtSession, type SessionFactory } from "../session.ts";
import { OPERATOR_MARK, oneOperatorModel, operatorInput, SINGLE_OPERATORS } from "./op-kernels.ts";

export async function profileForwards(input: ModelInput, forwards: number): Promise<void> {
  const ort = configureOrtWasm();
  const sessions: { endProfiling(): void }[] = [];
  const profiled: SessionFactory = async (bytes) => {
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"], enableProfiling: true });
    sessions.push(session);
    return wrapOrtSession(session, (t) => new ort.Tensor(t.type, t.data as never, t.dims));
  };
  const base = new URL(`${import.meta.env.BASE_URL}models/tiny-vlm/`, self.location.origin).href;
  const model = await loadOrtModel(fetchFiles(base), profiled, { key: "tiny-vlm" });
  try {
    for (let i = 0; i < forwards; i++) await model.forward(input, { answer: "yes" });
    for (const session of sessions) session.endProfiling();
  } finally {
    await model.dispose();
  }
}

/**
 * Profiles `runs` runs of each single-operator graph (`SINGLE_OPERATORS`) over `n` seeded floats, one profiled
 * session per operator, each one's events printed after `OPERATOR_MARK` and its name.
 */
export async function profileOperators(n: number, runs: number, seed: number): Promise<void> {
  const ort = configureOrtWasm();
  const x = new ort.Tensor("float32", operatorInput(n, seed), [n]);
  for (const entry of SINGLE_OPERATORS) {
    const domain = "domain" in entry ? entry.domain : undefined;
    const session = await ort.InferenceSession.create(oneOperatorModel(entry.op, n, domain), {
      executionProviders: ["wasm"],
      enableProfiling: true,
    });
    console.log(`${OPERATOR_MARK}${entry.op}`);
    for (let i = 0; i < runs; i++) await session.run({ x });
    session.endProfiling();
    await session.release();
  }
}
