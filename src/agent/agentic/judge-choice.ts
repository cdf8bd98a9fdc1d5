/**
 * Which judge drives a page's agentic investigation, as plain data a plan can
 * carry (and a run's config can keep, without its API key): the rule policy,
 * the user's OpenAI-compatible endpoint, or a model loaded in the page's
 * model worker. `agenticJudgeFor` turns it into the judge the host asks.
 */
import { modelJudge, openAICompatibleJudge, type Judge } from "../../evals/judge.ts";
import type { Model } from "../../core/index.ts";
import type { AgenticJudge } from "./host.ts";
import { rulePolicy, textJudge } from "./judges.ts";

export type JudgeChoice =
  | { readonly kind: "rules" }
  | {
      readonly kind: "endpoint";
      /** The API root, e.g. `http://127.0.0.1:11434/v1` (Ollama), `http://localhost:8000/v1` (vLLM). */
      readonly url: string;
      readonly model: string;
      /** Sent as a bearer token; never kept in the run's stored config (`withoutKey`). */
      readonly apiKey?: string;
    }
  | {
      readonly kind: "model";
      /** A bundled model's key (e.g. "tiny-lm"), loaded beside the model under investigation. */
      readonly model: string;
    };

/** The hosts the page's Content-Security-Policy lets it connect to for a judge: this machine's loopback names. */
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Is `url` an endpoint the page may reach? An http(s) URL whose host is loopback (the app's CSP allows
 * `http://127.0.0.1:*` and `http://localhost:*`, not the network); anything else throws saying what a
 * remote endpoint needs.
 *
 * @example checkEndpointUrl("http://127.0.0.1:11434/v1") // "http://127.0.0.1:11434/v1"
 */
export function checkEndpointUrl(url: string, where = "judge URL"): string {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new TypeError(`${where}: '${url}' is not a URL; e.g. http://127.0.0.1:11434/v1 (Ollama)`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new TypeError(`${where}: expected an http(s) URL, got ${parsed.protocol}`);
  if (!LOOPBACK.has(parsed.hostname))
    throw new TypeError(
      `${where}: the page connects only to endpoints on this machine (127.0.0.1 or localhost), got ${parsed.hostname}; for a remote endpoint run a loopback proxy to it, or use the CLI (evalrx investigate --agentic --judge URL)`,
    );
  return parsed.href.replace(/\/+$/, "");
}

/**
 * The choice, checked field by field (a plan from the page or a stored config).
 * @example checkJudgeChoice({ kind: "endpoint", url: "http://localhost:8000/v1", model: "qwen" }).kind // "endpoint"
 */
export function checkJudgeChoice(x: unknown, where = "plan.judge"): JudgeChoice {
  if (typeof x !== "object" || x === null)
    throw new TypeError(`${where}: expected { kind: "rules" | "endpoint" | "model" }`);
  const o = x as Record<string, unknown>;
  if (o.kind === "rules") return { kind: "rules" };
  if (o.kind === "endpoint") {
    if (typeof o.url !== "string") throw new TypeError(`${where}.url: expected the endpoint's API root`);
    if (typeof o.model !== "string" || !o.model.trim())
      throw new TypeError(`${where}.model: expected the model name the endpoint serves (e.g. qwen2.5:7b)`);
    if (o.apiKey !== undefined && typeof o.apiKey !== "string") throw new TypeError(`${where}.apiKey: expected text`);
    return {
      kind: "endpoint",
      url: checkEndpointUrl(o.url, `${where}.url`),
      model: o.model.trim(),
      ...(typeof o.apiKey === "string" && o.apiKey ? { apiKey: o.apiKey } : {}),
    };
  }
  if (o.kind === "model") {
    if (typeof o.model !== "string" || !/^[\w.-]+$/.test(o.model))
      throw new TypeError(
        `${where}.model: expected a bundled model's key (e.g. tiny-lm), got ${JSON.stringify(o.model)}`,
      );
    return { kind: "model", model: o.model };
  }
  throw new TypeError(`${where}.kind: expected "rules", "endpoint" or "model", got ${JSON.stringify(o.kind)}`);
}

/**
 * The choice as a run may keep it: the API key dropped.
 * @example withoutKey({ kind: "endpoint", url: "http://localhost:8000/v1", model: "m", apiKey: "sk-1" }) // { kind: "endpoint", url: "http://localhost:8000/v1", model: "m" }
 */
export function withoutKey(choice: JudgeChoice): JudgeChoice {
  if (choice.kind !== "endpoint" || choice.apiKey === undefined) return choice;
  return { kind: "endpoint", url: choice.url, model: choice.model };
}

/** What the loop gets for a choice: the agentic judge, and the text judge that words M3/M4 (an endpoint only, as the CLI's --judge). */
export interface ChosenJudge {
  readonly agentic: AgenticJudge;
  readonly wording?: Judge;
  /** Frees what the choice loaded (a judge model), once the run is over. */
  dispose(): Promise<void>;
}

/**
 * The judges a choice makes. A model choice loads its model through `loadModel` (the page's model worker)
 * and generates greedily; a tiny model may not write the tool-call format, and then the host refuses its
 * turns with the reason, as it refuses any malformed reply.
 *
 * @example (await agenticJudgeFor({ kind: "endpoint", url: "http://127.0.0.1:8000/v1", model: "qwen" }, { loadModel })).agentic.id // "openai:http://127.0.0.1:8000/v1/chat/completions#qwen"
 */
export async function agenticJudgeFor(
  choice: JudgeChoice | undefined,
  deps: {
    readonly loadModel: (key: string) => Promise<Model>;
    readonly fetch?: typeof fetch;
    /** The rule policy also searches for probes (the plan gave a probe budget). */
    readonly searchProbes?: boolean;
  },
): Promise<ChosenJudge> {
  const none = () => Promise.resolve();
  if (!choice || choice.kind === "rules")
    return { agentic: rulePolicy({ searchProbes: deps.searchProbes ?? false }), dispose: none };
  if (choice.kind === "endpoint") {
    const judge = openAICompatibleJudge({
      baseUrl: choice.url,
      model: choice.model,
      ...(choice.apiKey ? { apiKey: choice.apiKey } : {}),
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    });
    return { agentic: textJudge(judge), wording: judge, dispose: none };
  }
  const model = await deps.loadModel(choice.model);
  return { agentic: textJudge(modelJudge(model, { maxNewTokens: 96 })), dispose: () => model.dispose() };
}
