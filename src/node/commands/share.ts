import { writeFile } from "node:fs/promises";
import { checkRunFile } from "../../evals/run-file.ts";
import { validateReport } from "../../report/schema.ts";
import {
  BUNDLE_EXTENSION,
  OMISSIONS,
  readBundle,
  reportLink,
  runLink,
  shareUrl,
  writeBundle,
  type BundleContent,
  type LinkShare,
} from "../../share/index.ts";
import type { Command } from "../cli.ts";
import { readRegularFile } from "../confined.ts";
import { parseCommandArgs, parseJsonText } from "../eval-runs.ts";

/** Where `npm start` serves the app. */
export const DEFAULT_BASE = "http://localhost:4173/";

const usage = `evalrx share <report.json | run file | bundle${BUNDLE_EXTENSION}> [--base URL] [--bundle FILE]

  <file>     a report the CLI wrote (report.json), a run file exported from the page, or a bundle
  --base     the app's address the link opens (default ${DEFAULT_BASE}, where npm start serves it)
  --bundle   also write the whole report or run (every case, every image) as a bundle file to send

Prints the link: the report or run, compressed, in the URL's fragment (#/share/…), so opening it needs no
server and sends nothing anywhere. A link holds at most 32 KB; per-case detail that does not fit is left out
(a note on stderr and on the page says what). When even that does not fit, send the bundle (--bundle).`;

/** What a share file holds: a report, a run file, or a bundle of either; read and checked. */
async function readShareable(path: string): Promise<BundleContent> {
  const bytes = await readRegularFile(path, `'${path}'`);
  if (bytes[0] === 0x50 && bytes[1] === 0x4b) return readBundle(bytes);
  let json: unknown;
  try {
    json = parseJsonText(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw new Error(`'${path}' is not JSON (${(error as Error).message}); expected a report.json or a run file`, {
      cause: error,
    });
  }
  const format = (json as { format?: unknown } | null)?.format;
  if (format === "evalrx-report") {
    try {
      return { kind: "report", report: validateReport(json) };
    } catch (error) {
      throw new Error(`'${path}': ${(error as Error).message}`, { cause: error });
    }
  }
  if (format === "evalrx-run") return { kind: "run", run: checkRunFile(json, `run file '${path}'`).data };
  throw new Error(
    `'${path}' has format ${JSON.stringify(format)}; evalrx share reads a report ("evalrx-report"), a run file ("evalrx-run") or a bundle (${BUNDLE_EXTENSION})`,
  );
}

/**
 * The share link of a report, run file or bundle, at the app's address `base`.
 *
 * @example (await shareLinkOf(content, "http://localhost:4173/")).url // "http://localhost:4173/#/share/1.rVbb…"
 */
export async function shareLinkOf(content: BundleContent, base: string): Promise<LinkShare & { url: string }> {
  const share = content.kind === "report" ? await reportLink(content.report) : await runLink(content.run);
  return { ...share, url: shareUrl(base, share.token) };
}

export const command: Command = {
  summary: "print a link that opens a report or a run in the page, with no server (and optionally a bundle file)",
  usage,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      { base: { type: "string" }, bundle: { type: "string" } },
      usage,
    );
    if (positionals.length !== 1)
      throw new Error(`expected one file, got ${positionals.length}; usage: ${usage.split("\n")[0]}`);
    const content = await readShareable(positionals[0]!);
    if (values.bundle !== undefined) {
      await writeFile(values.bundle, writeBundle(content));
      console.error(`wrote ${values.bundle}`);
    }
    const share = await shareLinkOf(content, values.base ?? DEFAULT_BASE);
    for (const o of share.omitted)
      console.error(`note: the link leaves out ${OMISSIONS[o]} to fit; the bundle has them`);
    console.log(share.url);
    return 0;
  },
};
