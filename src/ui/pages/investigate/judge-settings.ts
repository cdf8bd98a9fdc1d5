/**
 * The agentic judge as the investigate form holds it: which judge, the
 * endpoint's URL, model and key, the local model — and what the browser
 * remembers of it when the user asks (localStorage; the key only if asked too).
 */
import { checkEndpointUrl, type JudgeChoice } from "../../../agent/agentic/judge-choice.ts";

/** The judge fields of the form, as its inputs hold them. */
export interface JudgeFields {
  /** rules (default): the deterministic rule policy; endpoint: the user's OpenAI-compatible server; model: a bundled model in the page. */
  judge: "rules" | "endpoint" | "model";
  judgeUrl: string;
  judgeModel: string;
  /** Kept in memory unless `rememberKey`. */
  judgeKey: string;
  /** The bundled model the local judge runs. */
  localJudge: string;
  /** Remember the endpoint (URL and model) in this browser. */
  rememberJudge: boolean;
  /** …and its API key too (plain text in this browser's localStorage). */
  rememberKey: boolean;
}

export const DEFAULT_JUDGE_FIELDS: JudgeFields = {
  judge: "rules",
  judgeUrl: "http://127.0.0.1:11434/v1",
  judgeModel: "",
  judgeKey: "",
  localJudge: "tiny-lm",
  rememberJudge: false,
  rememberKey: false,
};

/**
 * The judge the fields describe; a wrong field throws naming it.
 * @example judgeChoiceOf({ ...DEFAULT_JUDGE_FIELDS, judge: "endpoint", judgeModel: "qwen2.5:7b" }) // { kind: "endpoint", url: "http://127.0.0.1:11434/v1", model: "qwen2.5:7b" }
 */
export function judgeChoiceOf(fields: JudgeFields): JudgeChoice {
  if (fields.judge === "rules") return { kind: "rules" };
  if (fields.judge === "model") return { kind: "model", model: fields.localJudge };
  const url = checkEndpointUrl(fields.judgeUrl, "judge URL");
  const model = fields.judgeModel.trim();
  if (!model) throw new Error("judge model: the model name the endpoint serves (e.g. qwen2.5:7b for Ollama)");
  const key = fields.judgeKey.trim();
  return { kind: "endpoint", url, model, ...(key ? { apiKey: key } : {}) };
}

/**
 * The judge on the CLI's command line (its key comes from EVALRX_JUDGE_KEY, never the line).
 * @example cliJudgeWords({ kind: "endpoint", url: "http://127.0.0.1:11434/v1", model: "qwen" }) // ["--judge", "http://127.0.0.1:11434/v1", "--judge-model", "qwen"]
 */
export function cliJudgeWords(choice: JudgeChoice | undefined): string[] {
  return choice?.kind === "endpoint" ? ["--judge", choice.url, "--judge-model", choice.model] : [];
}

const KEY = "evalrx:agentic-judge";

/**
 * What the browser remembers, read back (a broken entry is ignored).
 * @example rememberedJudge('{"judgeUrl":"http://localhost:8000/v1","judgeModel":"m"}') // { judge: "endpoint", judgeUrl: "http://localhost:8000/v1", judgeModel: "m", rememberJudge: true }
 */
export function rememberedJudge(raw: string | null): Partial<JudgeFields> {
  let o: Record<string, unknown>;
  try {
    const v: unknown = raw === null ? null : JSON.parse(raw);
    if (!v || typeof v !== "object" || Array.isArray(v)) return {};
    o = v as Record<string, unknown>;
  } catch {
    return {};
  }
  if (typeof o.judgeUrl !== "string" || typeof o.judgeModel !== "string") return {};
  return {
    judge: "endpoint",
    judgeUrl: o.judgeUrl,
    judgeModel: o.judgeModel,
    rememberJudge: true,
    ...(typeof o.judgeKey === "string" ? { judgeKey: o.judgeKey, rememberKey: true } : {}),
  };
}

/** Remembers the endpoint as the fields ask (or forgets it). */
export function rememberJudge(fields: JudgeFields, storage: Pick<Storage, "setItem" | "removeItem">): void {
  if (fields.judge !== "endpoint" || !fields.rememberJudge) {
    if (!fields.rememberJudge) storage.removeItem(KEY);
    return;
  }
  storage.setItem(
    KEY,
    JSON.stringify({
      judgeUrl: fields.judgeUrl,
      judgeModel: fields.judgeModel,
      ...(fields.rememberKey && fields.judgeKey ? { judgeKey: fields.judgeKey } : {}),
    }),
  );
}

/** Reads the remembered endpoint from this browser's storage. */
export function loadRememberedJudge(
  storage: Pick<Storage, "getItem"> | undefined = globalThis.localStorage,
): Partial<JudgeFields> {
  try {
    return rememberedJudge(storage?.getItem(KEY) ?? null);
  } catch {
    return {};
  }
}
