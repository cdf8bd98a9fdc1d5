import type { Model } from "../core/index.ts";

/**
 * An LLM that grades: it takes a prompt and answers with text. The judge
 * evaluator and the diagnosis loop both use this one interface, so a local
 * model, an OpenAI-compatible endpoint or a test double all plug in the same way.
 * `id` names the judge (its model) and is part of every verdict's version and cache key.
 */
export type Judge = ((prompt: string, options?: { readonly signal?: AbortSignal }) => Promise<string>) & {
  readonly id?: string;
};

/** Where judge verdicts are kept between calls (in memory by default; any key/value store will do). */
export interface JudgeCache {
  get(key: string): JudgeVerdict | undefined | Promise<JudgeVerdict | undefined>;
  set(key: string, verdict: JudgeVerdict): void | Promise<void>;
}

export interface JudgeVerdict {
  readonly passed: boolean;
  readonly reason: string;
}

/**
 * What did the judge decide? Reads PASS or FAIL at the start of the first
 * non-empty line (optionally after "Verdict:" and markdown emphasis), the rest
 * being the reason; failing that, a lone upper-case PASS or FAIL anywhere.
 * Anything else throws: an unparsable answer is an error, never a silent fail.
 *
 * @example parseVerdict("FAIL: the answer names a blue square that is not there") // { passed: false, reason: "the answer names a blue square that is not there" }
 */
export function parseVerdict(text: string): JudgeVerdict {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const first = lines.findIndex((l) => l.length > 0);
  if (first >= 0) {
    const m = /^[#*_\s>]*(?:verdict\s*[:=-]\s*)?[*_]*(pass|fail)(?![a-z])[*_]*[\s:.,;\-–—)]*(.*)$/i.exec(lines[first]!);
    if (m) {
      const reason = [m[2]!, ...lines.slice(first + 1)].filter(Boolean).join(" ").trim();
      return { passed: m[1]!.toLowerCase() === "pass", reason };
    }
  }
  const pass = /\bPASS\b/.test(text);
  const fail = /\bFAIL\b/.test(text);
  if (pass !== fail) return { passed: pass, reason: text.trim() };
  const excerpt = text.trim().slice(0, 120);
  throw new Error(
    `the judge answered ${JSON.stringify(excerpt)}${text.trim().length > 120 ? "…" : ""}; expected PASS or FAIL on its first line, then a reason`,
  );
}

/**
 * A judge backed by a loaded model (the runtime's `Model`): greedy generation
 * of up to `maxNewTokens` tokens. Its id is the model's spec key.
 *
 * @example const j = modelJudge(model); await j("…rubric… Reply PASS or FAIL.") // "PASS the answer is right"
 */
export function modelJudge(model: Model, options: { readonly maxNewTokens?: number } = {}): Judge {
  const maxNewTokens = options.maxNewTokens ?? 64;
  const judge = (prompt: string, opts?: { readonly signal?: AbortSignal }) =>
    model.generate({ prompt }, { maxNewTokens, temperature: 0, ...(opts?.signal ? { signal: opts.signal } : {}) });
  return Object.assign(judge, { id: `model:${model.spec.key}` });
}

export interface OpenAIJudgeOptions {
  /** The API root, e.g. `http://localhost:8000/v1` (vLLM, TGI, Ollama, OpenAI). */
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** Injected fetch (tests, proxies); the global one by default. */
  readonly fetch?: typeof fetch;
  readonly system?: string;
}

/**
 * A judge behind an OpenAI-compatible chat-completions endpoint. Sends the
 * prompt as the user message (temperature 0 by default) and returns the first
 * choice's text; an HTTP error or a malformed body throws with what came back.
 *
 * @example const j = openAICompatibleJudge({ baseUrl: "http://localhost:8000/v1", model: "qwen2.5-7b" }); await j("…")
 */
export function openAICompatibleJudge(options: OpenAIJudgeOptions): Judge {
  let url: URL;
  try {
    url = new URL(options.baseUrl.replace(/\/+$/, "") + "/chat/completions");
  } catch {
    throw new TypeError(
      `openAICompatibleJudge(): baseUrl ${JSON.stringify(options.baseUrl)} is not a URL; e.g. "http://localhost:8000/v1"`,
    );
  }
  const doFetch = options.fetch ?? fetch;
  const judge = async (prompt: string, opts?: { readonly signal?: AbortSignal }): Promise<string> => {
    const messages = [
      ...(options.system ? [{ role: "system", content: options.system }] : []),
      { role: "user", content: prompt },
    ];
    const response = await doFetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: options.model,
        messages,
        temperature: options.temperature ?? 0,
        max_tokens: options.maxTokens ?? 256,
      }),
      ...(opts?.signal ? { signal: opts.signal } : {}),
    });
    const body = await response.text();
    if (!response.ok)
      throw new Error(`judge endpoint ${url.href} answered HTTP ${response.status}: ${body.slice(0, 200)}`);
    let content: unknown;
    try {
      content = (JSON.parse(body) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message
        ?.content;
    } catch {
      throw new Error(`judge endpoint ${url.href} answered non-JSON: ${body.slice(0, 200)}`);
    }
    if (typeof content !== "string")
      throw new Error(`judge endpoint ${url.href} answered without choices[0].message.content: ${body.slice(0, 200)}`);
    return content;
  };
  return Object.assign(judge, { id: `openai:${url.origin}${url.pathname}#${options.model}` });
}

/** A judge cache in memory. */
export function memoryJudgeCache(): JudgeCache & { readonly size: number } {
  const map = new Map<string, JudgeVerdict>();
  return {
    get: (key) => map.get(key),
    set: (key, verdict) => void map.set(key, verdict),
    get size() {
      return map.size;
    },
  };
}
