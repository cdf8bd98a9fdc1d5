/**
 * The report format: data first, versioned, validated. A report read from a
 * file or a link is untrusted: `parseReport` bounds its size, checks every
 * field against this schema, and only then hands it to a renderer (which
 * still renders every string as text).
 */
import * as v from "valibot";

/** Bumped when the report's shape changes incompatibly. */
export const REPORT_VERSION = 1;

/** Reports larger than this (as JSON text) are refused before parsing. */
export const MAX_REPORT_BYTES = 32 * 1024 * 1024;

const num = v.nullable(v.number());
const text = v.pipe(v.string(), v.maxLength(100_000));
const name = v.pipe(v.string(), v.maxLength(2_000));

const Effect = v.object({
  name,
  value: num,
  nullValue: v.number(),
  lo: num,
  hi: num,
  method: v.optional(text),
});

const Figure = v.union([
  v.object({
    type: v.literal("histogram"),
    edges: v.array(num),
    fail: v.array(v.number()),
    pass: v.array(v.number()),
  }),
  v.object({
    type: v.literal("counts"),
    withSignal: v.tuple([v.number(), v.number()]),
    without: v.tuple([v.number(), v.number()]),
  }),
]);

const SignalRow = v.object({
  signal: name,
  kind: v.picklist(["binary", "numeric", "ordinal"]),
  test: name,
  n: v.number(),
  failures: v.number(),
  p: num,
  e: num,
  effect: Effect,
  selected: v.boolean(),
  untestable: v.optional(text),
  figure: v.optional(Figure),
  /** The unit of inference ("case" or "cluster") and the test in words (added in 1.x; older reports lack them). */
  unit: v.optional(name),
  clusters: v.optional(v.number()),
  testDescription: v.optional(text),
});

const Verdict = v.picklist(["SUPPORTED", "REFUTED", "INCONCLUSIVE"]);

const HypothesisRow = v.object({
  id: name,
  signal: name,
  mechanism: text,
  author: name,
  statement: text,
  direction: name,
  directionSign: v.picklist([1, -1]),
  refutation: text,
  test: name,
  exploreN: v.number(),
  exploreEffect: Effect,
  exploreE: num,
  sealedN: v.nullable(v.number()),
  sealedEffect: v.nullable(Effect),
  eValue: num,
  p: num,
  eMethod: text,
  verdict: Verdict,
  reason: text,
  gates: v.nullable(
    v.object({
      statistical: v.object({ passed: v.boolean(), eBH: v.boolean(), direction: v.boolean() }),
      protocol: v.object({ consistent: v.boolean(), by: name, reason: text }),
    }),
  ),
  evidence: v.object({ stated: num, frozen: num, sealedOpened: num, decided: num }),
  /** The sealed test's unit of inference and description, and the hypothesis' share of α (weight w, level γ). */
  unit: v.optional(name),
  clusters: v.optional(v.number()),
  testDescription: v.optional(text),
  exploreP: v.optional(num),
  weight: v.optional(num),
  gamma: v.optional(num),
  /** Signals M3 found to be the same measurement as this one (identical, or a monotone function of it), merged in. */
  merged: v.optional(v.array(v.object({ signal: name, relation: name }))),
});

const Problem = v.object({ what: name, why: text });

/** An image inside a report: a raster data URL only (never SVG, never a URL that would fetch). */
const ImageData = v.object({
  type: v.picklist(["image/png", "image/jpeg", "image/gif", "image/webp"]),
  dataUrl: v.pipe(
    v.string(),
    v.maxLength(4_000_000),
    v.regex(
      /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]*={0,2}$/,
      "must be a base64 data: URL of a PNG, JPEG, GIF or WebP image",
    ),
  ),
});

const EvidenceCase = v.object({
  id: name,
  prompt: text,
  answer: text,
  expected: v.optional(text),
  passed: v.boolean(),
  value: num,
  split: v.optional(name),
  image: v.optional(v.object({ ref: name, hash: v.optional(name) })),
  /** Attention over the image grid, row-major (`grid.rows × grid.cols` values). */
  attention: v.optional(v.pipe(v.array(num), v.maxLength(65_536))),
});

/** The cases behind each hypothesis (exploration split), with images and attention (added in 1.x). */
const Evidence = v.object({
  split: name,
  note: v.optional(text),
  grid: v.optional(v.object({ rows: v.number(), cols: v.number(), what: v.optional(text) })),
  images: v.record(
    v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/, "must be an image key sha256:<64 hex>")),
    ImageData,
  ),
  hypotheses: v.array(
    v.object({
      hypothesis: name,
      signal: name,
      failing: v.pipe(v.array(EvidenceCase), v.maxLength(50)),
      passing: v.pipe(v.array(EvidenceCase), v.maxLength(50)),
    }),
  ),
});

/** POPE's metrics on one split (or "all"), from the pope analyzer (added in 1.x). */
const PopeSplit = v.object({
  split: name,
  n: v.number(),
  accuracy: num,
  precision: num,
  recall: num,
  f1: num,
  yesRatio: num,
  unknownShare: v.optional(num),
});

const SplitResults = v.record(
  name,
  v.object({
    n: v.number(),
    fixed: v.number(),
    broken: v.number(),
    baselineYesRatio: v.optional(num),
    candidateYesRatio: v.optional(num),
  }),
);

const RepairRow = v.object({
  tier: name,
  candidate: name,
  /** The candidate's stable id (`rewrite:context`): what a promotion names (added in 1.x). */
  signature: v.optional(name),
  description: text,
  n: v.number(),
  baselineFailures: v.number(),
  candidateFailures: v.number(),
  fixed: v.number(),
  broken: v.number(),
  delta: num,
  p: num,
  e: num,
  eMethod: text,
  validated: v.boolean(),
  /** The paired test and its unit, the candidate's level γ in the one M5 budget (added in 1.x). */
  test: v.optional(name),
  unit: v.optional(name),
  clusters: v.optional(v.number()),
  gamma: v.optional(num),
  /** Yes/no tasks: the candidate's and the baseline's yes-ratio on the M5 cases. */
  yesRatio: v.optional(num),
  baselineYesRatio: v.optional(num),
  /** Fixed/broken (and yes-ratios) per split of the cases (POPE's random / popular / adversarial). */
  bySplit: v.optional(SplitResults),
  /** Yes/no tasks: the yes-bias control the candidate had to beat. */
  control: v.optional(
    v.object({
      shift: v.number(),
      yesRatio: num,
      failures: v.number(),
      fixed: v.number(),
      broken: v.number(),
      p: num,
      e: num,
      beaten: v.boolean(),
      bySplit: v.optional(SplitResults),
    }),
  ),
  /** Where M5's cases came from (a repair split, or reused from M4). */
  cases: v.optional(text),
  /** L4: what the repair must not break — accuracy per guarded slice against the baseline, within `margin` (added in 1.x). */
  noFreeLunch: v.optional(
    v.object({
      margin: v.number(),
      slices: v.array(
        v.object({ slice: name, n: v.number(), baseline: num, candidate: num, drop: num, holds: v.boolean() }),
      ),
      holds: v.boolean(),
      note: text,
    }),
  ),
  /** L4: what the executor trained (method, pool, losses, the merged folder), or `failed` with the reason (added in 1.x). */
  training: v.optional(v.record(name, v.unknown())),
});

/** One failure mode of the exploration split, with its hypothesis and where the fixed rule placed cases (added in 1.x). */
const ModeRow = v.object({
  id: name,
  size: v.number(),
  share: num,
  defining: v.array(
    v.object({ signal: name, kind: name, modeMean: num, contrastMean: num, effect: num, effectName: name }),
  ),
  representatives: v.array(name),
  /** The M3 hypothesis that states it ("a case in this mode fails more often"). */
  hypothesis: v.optional(name),
  /** Exploration cases the fixed rule places in it (failing and passing), and sealed ones once M4 opened them. */
  placed: v.optional(v.object({ n: v.number(), failures: v.number() })),
  sealed: v.optional(v.object({ n: v.number(), failures: v.number() })),
});

/** The failing cases grouped into modes (exploration split only), with the choice of k justified (added in 1.x). */
const Modes = v.object({
  split: name,
  method: text,
  space: name,
  contrast: name,
  seed: v.number(),
  k: v.number(),
  why: text,
  criterion: v.array(
    v.object({ k: v.number(), logW: num, gap: num, s: num, silhouette: v.optional(num), smallest: v.number() }),
  ),
  failing: v.number(),
  passing: v.number(),
  modes: v.array(ModeRow),
  unused: v.array(v.object({ signal: name, reason: text })),
  note: v.optional(text),
});

/** Lessons of earlier investigations this run read, and how many it left (added in 1.x). */
const Lessons = v.object({
  /** Where they were read from and written to (a file path, or the page's IndexedDB database). */
  store: name,
  /** What they were used for: ordering only, never a test. */
  use: text,
  used: v.pipe(
    v.array(
      v.object({
        id: name,
        kind: name,
        subject: name,
        text,
        runId: name,
        at: name,
        weight: num,
        decay: num,
        relevance: num,
      }),
    ),
    v.maxLength(200),
  ),
  /** The ordering prior each lesson subject got (signal or analyzer; + earlier, − later). */
  priors: v.optional(v.array(v.object({ subject: name, prior: num }))),
  problems: v.optional(v.array(text)),
  recorded: v.optional(v.number()),
  /** The lessons this run drew at its end (appended to the store unless already there). */
  recordedLessons: v.optional(
    v.pipe(v.array(v.object({ id: name, kind: name, subject: name, text: v.optional(text) })), v.maxLength(200)),
  ),
});

/** A cell of an analysis table: JSON scalars only (the sandbox protocol's `Cell`). */
const AnalysisCell = v.nullable(v.union([v.string(), v.number(), v.boolean()]));

/** An analysis run in the locked sandbox, as it ran: its code, the input's fingerprint, the runtime, the output or error. */
const AnalysisRow = v.object({
  id: name,
  author: name,
  purpose: text,
  code: text,
  fingerprint: name,
  n: v.number(),
  runtime: text,
  ok: v.boolean(),
  ms: v.number(),
  reason: v.optional(name),
  error: v.optional(text),
  output: v.optional(
    v.object({
      tables: v.array(v.object({ title: text, columns: v.array(name), rows: v.array(v.array(AnalysisCell)) })),
      figures: v.array(
        v.object({
          kind: v.picklist(["bar", "scatter", "line", "histogram"]),
          title: text,
          x: v.array(v.union([v.number(), name])),
          y: v.array(v.number()),
          xLabel: v.optional(name),
          yLabel: v.optional(name),
        }),
      ),
      notes: v.array(text),
      suggestions: v.array(v.object({ signal: name, direction: v.number(), why: text })),
    }),
  ),
  setAside: v.optional(v.array(v.object({ signal: name, why: text }))),
});

/** One turn of the judge-decided loop: the call, the judge's reason, and what the host did with it. */
const AgenticTurn = v.object({
  turn: v.number(),
  tool: v.nullable(name),
  args: v.record(name, v.unknown()),
  why: text,
  status: v.picklist(["ran", "refused"]),
  reason: v.optional(text),
  result: v.optional(text),
  modelCalls: v.number(),
  detail: v.optional(v.record(name, v.unknown())),
  reply: v.optional(text),
});

/** The judge-decided loop: who judged, the host's rules, every turn, and how it stopped. */
const Agentic = v.object({
  judge: name,
  maxTurns: v.number(),
  modelCallBudget: v.nullable(v.number()),
  caps: v.record(name, v.number()),
  tools: v.array(name),
  sandbox: v.nullable(text),
  turns: v.array(AgenticTurn),
  stop: v.nullable(
    v.object({
      by: v.picklist(["judge", "host"]),
      success: v.boolean(),
      hypothesis: v.optional(name),
      summary: text,
      turns: v.number(),
      refused: v.number(),
      modelCalls: v.number(),
      supported: v.array(name),
    }),
  ),
});

/** The probe search that grew the dataset before M1: failure rate per edit family against the seeds' (added in 1.x). */
const ProbeSearch = v.object({
  /** What was edited: demo scenes ("scene"), text cases ("text") or photos with object boxes ("photo"). */
  kind: v.optional(name),
  budget: v.optional(v.number()),
  seed: v.optional(v.number()),
  /** The grown dataset was already stored (a resumed run): the search did not run again. */
  reused: v.optional(v.boolean()),
  seedCalls: v.optional(v.number()),
  seedFailures: v.optional(v.number()),
  seedRate: v.optional(num),
  calls: v.optional(v.number()),
  failures: v.optional(v.number()),
  rate: v.optional(num),
  lift: v.optional(num),
  stopped: v.optional(name),
  families: v.optional(
    v.array(v.object({ family: name, calls: v.number(), failures: v.number(), rate: num, kept: v.number() })),
  ),
  kept: v.optional(v.number()),
  examples: v.optional(
    v.pipe(
      v.array(v.object({ id: name, prompt: text, expected: name, image: v.optional(name), parent: name, edit: text })),
      v.maxLength(50),
    ),
  ),
  dataset: v.object({ id: name, version: name, cases: v.number(), parent: v.optional(name) }),
  note: v.optional(text),
});

/** The whole report (version `REPORT_VERSION`): what `validateReport` checks and `Report` is inferred from. */
export const ReportSchema = v.object({
  format: v.literal("evalrx-report"),
  version: v.literal(REPORT_VERSION),
  runId: name,
  kind: v.picklist(["explore", "investigate"]),
  question: text,
  createdAt: name,
  finishedAt: v.nullable(name),
  complete: v.boolean(),
  provenance: v.object({
    codeVersion: name,
    seed: v.number(),
    alpha: v.number(),
    data: v.object({
      source: text,
      fingerprint: name,
      n: v.number(),
      labelColumn: v.nullable(name),
      labelDistribution: v.object({ fail: v.number(), pass: v.number() }),
      sampled: v.optional(text),
    }),
    model: v.optional(v.record(name, v.unknown())),
    holdout: v.nullable(
      v.object({
        fraction: v.number(),
        by: name,
        exploreN: v.number(),
        sealedN: v.number(),
        clusters: v.optional(v.number()),
        /** Cases kept apart for M5 (a repair split), when there is one. */
        repairN: v.optional(v.number()),
      }),
    ),
  }),
  signals: v.object({
    tried: v.number(),
    selected: v.array(name),
    untestable: v.array(v.object({ name, reason: text })),
    tested: v.array(SignalRow),
    procedure: text,
    /** Friedman across layers for layered signals (descriptive, not part of e-BH). */
    layers: v.optional(
      v.array(
        v.object({
          family: name,
          layers: v.array(name),
          n: v.number(),
          statistic: num,
          p: num,
          e: v.optional(num),
          auc: v.array(num),
          strongest: name,
        }),
      ),
    ),
  }),
  hypotheses: v.array(HypothesisRow),
  problems: v.array(Problem),
  stages: v.array(v.object({ stage: name, ms: v.number() })),
  probe: v.optional(
    v.object({
      cases: v.number(),
      failures: v.number(),
      modelKind: name,
      analyzers: v.array(
        v.object({ name, rank: v.number(), tags: v.array(name), ran: v.boolean(), reason: v.optional(text) }),
      ),
      findings: v.array(v.object({ analyzer: name, summary: text })),
      /** Mean attention rollout over the image grid, failures vs passes (row-major). */
      maps: v.optional(v.object({ rows: v.number(), cols: v.number(), fail: v.array(num), pass: v.array(num) })),
      /** POPE per split and CHAIR over captions, from their analyzers' findings (added in 1.x). */
      pope: v.optional(v.array(PopeSplit)),
      chair: v.optional(v.object({ captions: v.number(), chairI: num, chairS: num })),
    }),
  ),
  intervention: v.optional(
    v.nullable(
      v.object({
        hypothesis: name,
        description: text,
        n: v.number(),
        baselineFailures: v.number(),
        interventionFailures: v.number(),
        delta: num,
        p: num,
        e: num,
        causal: v.boolean(),
        note: text,
        test: v.optional(name),
        unit: v.optional(name),
        clusters: v.optional(v.number()),
        gamma: v.optional(num),
        yesRatio: v.optional(num),
        baselineYesRatio: v.optional(num),
        cases: v.optional(text),
      }),
    ),
  ),
  repairs: v.optional(
    v.object({
      maxTier: name,
      candidates: v.array(RepairRow),
      fixedBy: v.nullable(name),
      recommendation: text,
      recipe: v.optional(v.record(name, v.unknown())),
      /** The ladder's share of M5's α budget: K candidates, each at γ = alpha/K; `note` says how the mechanism test split it. */
      budget: v.optional(v.object({ alpha: v.number(), tests: v.number(), gamma: v.number(), note: v.optional(text) })),
      cases: v.optional(text),
    }),
  ),
  eValueMethods: v.array(text),
  evidence: v.optional(Evidence),
  /** The judge-decided loop's path (investigate --agentic). */
  agentic: v.optional(Agentic),
  /** Analyses written by the judge or the user, run in the locked sandbox over the exploration records. */
  analyses: v.optional(v.array(AnalysisRow)),
  modes: v.optional(Modes),
  lessons: v.optional(Lessons),
  probeSearch: v.optional(ProbeSearch),
});

export type Report = v.InferOutput<typeof ReportSchema>;
export type ReportHypothesis = Report["hypotheses"][number];
export type ReportSignal = Report["signals"]["tested"][number];
export type ReportRepair = NonNullable<Report["repairs"]>["candidates"][number];
export type ReportEvidence = NonNullable<Report["evidence"]>;
export type ReportEvidenceCase = ReportEvidence["hypotheses"][number]["failing"][number];
export type ReportModes = NonNullable<Report["modes"]>;
export type ReportLessons = NonNullable<Report["lessons"]>;

/**
 * Reads a report from untrusted JSON text: refuses text over `MAX_REPORT_BYTES`,
 * then checks the version and every field. Throws with the first few problems.
 *
 * Example: `parseReport(await file.text())` → a `Report`, or an error such as
 * "report: version 7 is not one this EvalRx reads (1)".
 */
export function parseReport(json: string): Report {
  if (typeof json !== "string") throw new TypeError("parseReport(): expected the report's JSON text");
  if (json.length > MAX_REPORT_BYTES)
    throw new Error(`report: ${json.length} characters exceeds the ${MAX_REPORT_BYTES}-character limit`);
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    throw new Error(`report: not JSON (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  return validateReport(data);
}

/** Checks an already-parsed value against the report schema; see `parseReport`. */
export function validateReport(data: unknown): Report {
  if (
    data &&
    typeof data === "object" &&
    "version" in data &&
    (data as { version: unknown }).version !== REPORT_VERSION
  )
    throw new Error(
      `report: version ${JSON.stringify((data as { version: unknown }).version)} is not one this EvalRx reads (${REPORT_VERSION})`,
    );
  const result = v.safeParse(ReportSchema, data);
  if (!result.success) {
    const issues = result.issues.slice(0, 5).map((issue) => {
      const path = issue.path?.map((p) => String(p.key)).join(".") ?? "(root)";
      return `${path}: ${issue.message}`;
    });
    throw new Error(`report: not a valid EvalRx report — ${issues.join("; ")}`);
  }
  return result.output;
}
