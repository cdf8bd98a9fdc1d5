/**
 * A local chat-completions server for tests: it speaks the OpenAI protocol
 * (POST /v1/chat/completions), reads the evidence board out of the host's
 * prompt and answers as the rule policy would, in a fenced JSON block as
 * chat models do. It stands in for the user's endpoint (vLLM, Ollama), not
 * for anything of ours: the judge, the HTTP client and the host are real.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Board } from "./board.ts";
import { rulePolicy } from "./judges.ts";

/** What the server says to a prompt without a board: the words each of the loop's other judge prompts expects. */
function plainAnswer(prompt: string): string {
  const rewrite = /^Rewrite this yes\/no question[^]*^Question: (.*)$/m.exec(prompt);
  if (rewrite) return paraphrases(rewrite[1]!);
  if (/Answer YES or NO/.test(prompt)) return "YES\nThe hypothesis names a signal the question asks about.";
  if (/topic names only/.test(prompt)) return "attention, image";
  const rule = /A rule-based reading: (.*)/.exec(prompt);
  if (rule) return rule[1]!;
  return "Another explanation is the mix of scenes; a sealed effect of the other sign would refute it.";
}

/**
 * Rewordings of "is there a <thing> ?" as a chat model might give them: two that keep the meaning, and three the
 * probe search must drop (a negation, another colour, a leaked answer), so a test sees both sides of the check.
 */
function paraphrases(question: string): string {
  const thing = /is there an? (.+?)\s*\?/i.exec(question)?.[1] ?? "object";
  const other = thing.replace(/\b(red|green|blue|yellow|purple)\b/, (c) => (c === "blue" ? "red" : "blue"));
  return [
    `1. Can you see a ${thing} in this image?`,
    `2. Does the picture contain a ${thing}?`,
    `3. Is there no ${thing}?`,
    `4. Is there a ${other === thing ? `big ${thing} or a small one` : other}?`,
    `5. Is there a ${thing} (the answer is yes)?`,
  ].join("\n");
}

export interface BoardServer {
  readonly baseUrl: string;
  /** Every request body, in order. */
  readonly requests: { model: string; messages: { role: string; content: string }[] }[];
  /** Each request's Authorization header (absent: undefined), in order. */
  readonly authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/**
 * @example const server = await boardServer(); // server.baseUrl === "http://127.0.0.1:PORT/v1"
 */
export async function boardServer(
  options: { readonly analysis?: boolean; readonly searchProbes?: boolean } = {},
): Promise<BoardServer> {
  const policy = rulePolicy({ analysis: options.analysis ?? false, searchProbes: options.searchProbes ?? false });
  const requests: BoardServer["requests"] = [];
  const authorizations: BoardServer["authorizations"] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      // A page calls it cross-origin, as it would call Ollama (OLLAMA_ORIGINS) or vLLM (--allowed-origins).
      res.setHeader("access-control-allow-origin", "*");
      if (req.method === "OPTIONS") {
        res.writeHead(204, {
          "access-control-allow-methods": "POST",
          "access-control-allow-headers": "content-type, authorization",
        });
        res.end();
        return;
      }
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        res.writeHead(404).end("not found");
        return;
      }
      const request = JSON.parse(body) as BoardServer["requests"][number];
      requests.push(request);
      authorizations.push(req.headers.authorization);
      const prompt = request.messages.at(-1)?.content ?? "";
      const line = prompt.split("\n").find((l) => l.startsWith('{"question"'));
      // The same endpoint is the run's text judge too (topics, mechanisms, protocol consistency): plain answers.
      const answer = line
        ? policy.next("", JSON.parse(line) as Board).then((c) => "```json\n" + c + "\n```")
        : Promise.resolve(plainAnswer(prompt));
      void answer.then((content) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: `chatcmpl-${requests.length}`,
            object: "chat.completion",
            model: request.model,
            choices: [
              {
                index: 0,
                message: { role: "assistant", content: "```json\n" + content + "\n```" },
                finish_reason: "stop",
              },
            ],
          }),
        );
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    authorizations,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
