/**
 * The cases behind each hypothesis, for a reader to look at: the failing
 * cases that show the hypothesised pattern most strongly and the passing
 * cases that show it least, each with its question, answer, expected answer,
 * image and attention over the image. Taken from the exploration split only
 * (where the hypotheses were formed), so showing them reveals nothing of the
 * sealed split; logged as one `evidence.cases` event that the report copies.
 */
import type { FailureCase, ImagePixels } from "../core/index.ts";
import { imageKey, sniffImage } from "../datasets/index.ts";
import { toBase64 } from "../store/codec.ts";
import { encode as encodePng } from "fast-png";
import type { Hypothesis } from "./diagnose.ts";
import type { EventLog } from "./events.ts";
import type { ProbedCase } from "./probe.ts";
import { codeValues, type CaseTable } from "./signals.ts";

/** One case shown as evidence. */
export interface EvidenceCase {
  readonly id: string;
  readonly prompt: string;
  readonly answer: string;
  readonly expected?: string;
  readonly passed: boolean;
  /** The hypothesis' signal on this case. */
  readonly value: number | null;
  readonly split?: string;
  /** The image: its reference in the dataset, and its store key (`sha256:…`) when its bytes were read. */
  readonly image?: { readonly ref: string; readonly hash?: string };
  /** Attention over the image grid (row-major, `grid.rows × grid.cols`), when the probe kept it. */
  readonly attention?: readonly (number | null)[];
}

/** The `evidence.cases` payload, and the report's `evidence` field. */
export interface Evidence {
  readonly split: "exploration";
  readonly note: string;
  readonly grid?: { readonly rows: number; readonly cols: number; readonly what: string };
  /** Image data by store key, each once (several questions share one image). */
  readonly images: Readonly<Record<string, { readonly type: string; readonly dataUrl: string }>>;
  readonly hypotheses: readonly {
    readonly hypothesis: string;
    readonly signal: string;
    readonly failing: readonly EvidenceCase[];
    readonly passing: readonly EvidenceCase[];
  }[];
}

export interface EvidenceOptions {
  /** Cases per side (failing, passing) per hypothesis; default 3. */
  readonly perSide?: number;
  /** Reads a case's image (as M1 did); without it cases carry their image reference only. */
  readonly images?: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
  /** The attention grid the probe kept per case (its rollout's rows × cols). */
  readonly grid?: { readonly rows: number; readonly cols: number };
  /** Images larger than this (bytes) are named, not embedded; default 256 KiB. */
  readonly maxImageBytes?: number;
}

const TEXT_LIMIT = 2000;
const clip = (s: string) => (s.length > TEXT_LIMIT ? `${s.slice(0, TEXT_LIMIT - 1)}…` : s);

function expectedText(expected: unknown): string | undefined {
  if (expected === undefined || expected === null) return undefined;
  return clip(typeof expected === "string" ? expected : JSON.stringify(expected));
}

async function imageData(
  ref: string,
  row: FailureCase,
  read: NonNullable<EvidenceOptions["images"]>,
  maxBytes: number,
): Promise<{ hash: string; type: string; dataUrl?: string } | undefined> {
  let data: Uint8Array | ImagePixels;
  try {
    data = await read(ref, row);
  } catch {
    return undefined; // M1 read it; if it cannot be read now the case keeps its reference only
  }
  const bytes =
    data instanceof Uint8Array
      ? data
      : encodePng({
          width: data.width,
          height: data.height,
          data: new Uint8Array(data.data.buffer, data.data.byteOffset, data.data.byteLength),
          channels: 4,
        });
  const sniffed = sniffImage(bytes);
  const hash = ref.startsWith("sha256:") ? ref : imageKey(bytes);
  if ("reason" in sniffed || !/^image\/(png|jpeg|gif|webp)$/.test(sniffed.type)) return undefined;
  if (bytes.length > maxBytes) return { hash, type: sniffed.type };
  return { hash, type: sniffed.type, dataUrl: `data:${sniffed.type};base64,${toBase64(bytes)}` };
}

/**
 * Picks each hypothesis' evidence cases on the exploration split: failing
 * cases ordered by how strongly their signal points the hypothesised way
 * (the highest values for "higher in failures", the lowest for "lower"),
 * passing cases by how strongly it points the other way; ties by id, cases
 * without a value left out. Reads each picked case's image once.
 *
 * @example await evidenceCases(hypotheses, loop.explore, probed, { images, grid: { rows: 6, cols: 6 } })
 *   // { split: "exploration", hypotheses: [{ hypothesis: "H1", failing: [3 cases], passing: [3 cases] }], images: { "sha256:…": … } }
 */
export async function evidenceCases(
  hypotheses: readonly Hypothesis[],
  table: CaseTable,
  probed: readonly ProbedCase[],
  options: EvidenceOptions = {},
): Promise<Evidence> {
  const perSide = options.perSide ?? 3;
  if (!Number.isInteger(perSide) || perSide < 1 || perSide > 12)
    throw new RangeError(`evidenceCases(): perSide must be a whole number from 1 to 12, got ${perSide}`);
  const maxBytes = options.maxImageBytes ?? 256 * 1024;
  const byId = new Map(probed.map((p) => [p.case.id, p]));
  const grid = options.grid;
  const images: Record<string, { type: string; dataUrl: string }> = {};
  const read = new Map<string, Promise<Awaited<ReturnType<typeof imageData>>>>();

  const caseOf = async (row: number, value: number): Promise<EvidenceCase | undefined> => {
    const p = byId.get(table.ids[row]!);
    if (!p) return undefined;
    const c = p.case;
    let image: EvidenceCase["image"];
    if (c.input.image !== undefined) {
      const ref = c.input.image;
      let found: Awaited<ReturnType<typeof imageData>>;
      if (options.images) {
        let pending = read.get(ref);
        if (!pending) read.set(ref, (pending = imageData(ref, c, options.images, maxBytes)));
        found = await pending;
      }
      if (found?.dataUrl) images[found.hash] = { type: found.type, dataUrl: found.dataUrl };
      image = {
        ref: clip(ref.startsWith("data:") ? "(inline data URL)" : ref),
        ...(found ? { hash: found.hash } : {}),
      };
    }
    const attention =
      grid && p.rollout && p.rollout.length === grid.rows * grid.cols
        ? p.rollout.map((v) => (Number.isFinite(v) ? Math.round(v * 1e6) / 1e6 : null)) // six decimals: plenty for a heatmap
        : undefined;
    const expected = expectedText(c.expected);
    return {
      id: c.id,
      prompt: clip(c.input.prompt),
      answer: clip(p.output),
      ...(expected !== undefined ? { expected } : {}),
      passed: p.passed,
      value: Number.isFinite(value) ? value : null,
      ...(c.split !== undefined ? { split: c.split } : {}),
      ...(image ? { image } : {}),
      ...(attention ? { attention } : {}),
    };
  };

  const out: Evidence["hypotheses"][number][] = [];
  for (const h of hypotheses) {
    const column = table.columns.get(h.column);
    if (!column) continue;
    const values = codeValues(column, h.kind, h.level);
    const rows = table.ids.map((_, i) => i).filter((i) => !Number.isNaN(values[i]!));
    // "Points the hypothesised way": the value times the direction, larger first.
    const order = (sign: number) => (a: number, b: number) =>
      sign * (values[b]! - values[a]!) * h.direction || (table.ids[a]! < table.ids[b]! ? -1 : 1);
    const failing = rows
      .filter((i) => table.failed[i])
      .sort(order(1))
      .slice(0, perSide);
    const passing = rows
      .filter((i) => !table.failed[i])
      .sort(order(-1))
      .slice(0, perSide);
    const pick = async (list: number[]) =>
      (await Promise.all(list.map((i) => caseOf(i, values[i]!)))).filter((c): c is EvidenceCase => c !== undefined);
    out.push({ hypothesis: h.id, signal: h.signal, failing: await pick(failing), passing: await pick(passing) });
  }
  return {
    split: "exploration",
    note: `the ${perSide} failing cases where each hypothesis' signal points its way most strongly, and the ${perSide} passing cases where it points the other way most, from the exploration split (the sealed split is not shown case by case)`,
    ...(grid
      ? { grid: { ...grid, what: "attention rollout from the last prompt position to the image patches" } }
      : {}),
    images,
    hypotheses: out,
  };
}

/**
 * Picks the evidence (see `evidenceCases`) and logs it as `evidence.cases`.
 *
 * @example await logEvidence(log, loop.hypotheses, loop.explore, probed, { images })
 */
export async function logEvidence(
  log: EventLog,
  hypotheses: readonly Hypothesis[],
  table: CaseTable,
  probed: readonly ProbedCase[],
  options: EvidenceOptions = {},
): Promise<Evidence> {
  const evidence = await evidenceCases(hypotheses, table, probed, options);
  log.append("report", "evidence.cases", { ...evidence });
  return evidence;
}
