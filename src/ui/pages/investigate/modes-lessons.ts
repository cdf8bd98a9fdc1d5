import type { RunEvent } from "../../../agent/events.ts";
import { buildReport } from "../../../agent/report.ts";
import { lessonsSection, modesSection, probeSearchSection } from "../../../report/modes-view.ts";
import type { Report } from "../../../report/schema.ts";
import type { SectionView } from "../../../report/view.ts";

/** One of the page's three panels beside the stage rail: the report's section, or why there is none yet. */
export interface GrowthPanel {
  readonly section?: SectionView;
  /** Shown instead of the section: what the panel will hold and when, or why it holds nothing. */
  readonly empty?: string;
}

export interface GrowthPanels {
  readonly probes: GrowthPanel;
  readonly modes: GrowthPanel;
  readonly lessons: GrowthPanel;
  /** The report could not be folded from these events (a partial or damaged log): the reason. */
  readonly failure?: string;
}

/** The event types these panels read: the report is folded again only when one of them is added. */
const READ = new Set([
  "run.started",
  "data.loaded",
  "probes.searched",
  "problem",
  "modes.found",
  "modes.placed",
  "hypotheses.frozen",
  "hypothesis.decided",
  "evidence.cases",
  "lessons.used",
  "lessons.recorded",
  "run.finished",
]);

/**
 * The signature of what the panels read in a log: the panels are rebuilt when it changes, not at every
 * progress event of a live run.
 *
 * @example panelsKey(events) // "0:run.started 1:data.loaded 14:modes.found …"
 */
export function panelsKey(events: readonly RunEvent[]): string {
  return events
    .filter((e) => READ.has(e.type))
    .map((e) => `${e.seq}:${e.type}`)
    .join(" ");
}

/** The report a log folds into, for the panels (or why it does not fold). */
export interface PanelsFold {
  readonly report?: Report;
  readonly failure?: string;
}

/**
 * The report the panels are drawn from, folded from the log: the heavier half of `growthPanels` (a finished
 * 600-case log takes about as long to fold as its sections take to build), so the page can run the two halves in
 * separate tasks. A log with no run.started folds into nothing.
 *
 * @example foldPanels(events).report?.modes?.k // 2
 */
export function foldPanels(events: readonly RunEvent[]): PanelsFold {
  if (!events.some((e) => e.type === "run.started")) return {};
  try {
    return { report: buildReport(events) };
  } catch (error) {
    return {
      failure: `the report could not be folded from this log: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/**
 * What an investigation found beyond the stages, as the investigate page shows it: the probe search that grew
 * the dataset, the failure modes of the exploration split (size, share, defining signals with effect sizes,
 * representative cases with images and attention overlays) and the lessons read and left — the report's own
 * sections (`src/report/modes-view.ts`), folded from the log as the report page and the HTML export fold it, so
 * the three say the same. Each panel without data says what it will hold and when, or why it holds nothing.
 * `folded` is the log's fold (`foldPanels`), when it was made in an earlier task.
 *
 * @example growthPanels(events, "finished").modes.section?.title // "Failure modes"
 */
export function growthPanels(
  events: readonly RunEvent[],
  state: "running" | "finished" | "failed" | "cancelled" | "interrupted" | undefined,
  options: { readonly size?: number; readonly opacity?: number } = {},
  folded: PanelsFold = foldPanels(events),
): GrowthPanels {
  const has = (type: string) => events.some((e) => e.type === type);
  const m2Done = events.some((e) => e.type === "stage.finished" && e.payload["stage"] === "M2");
  const ended = state !== undefined && state !== "running";
  const { report, failure } = folded;
  // The judge-decided loop clusters only when its judge calls cluster_failures, and reads no lessons.
  const agentic = events.some((e) => e.type === "run.started" && e.payload["agentic"] !== undefined);
  const clustered = events.some(
    (e) => e.type === "agentic.turn" && e.payload["tool"] === "cluster_failures" && e.payload["status"] === "ran",
  );
  const size = options.size ?? 160;
  const opacity = options.opacity ?? 0.6;
  const probesSection = report ? probeSearchSection(report) : undefined;
  const pastSetup = events.some((e) => e.type === "stage.started" && e.payload["stage"] === "M1");
  const probes: GrowthPanel = probesSection
    ? { section: probesSection }
    : {
        empty:
          pastSetup || ended
            ? "No probe search in this investigation: start one with 'Search for failing cases first' (the CLI's --search-probes) to grow the dataset with failing variants before M1."
            : "A probe search, when asked for, runs before M1; its failure rate per edit family shows here when it ends.",
      };
  const modesView = report ? modesSection(report, size, opacity) : undefined;
  const modes: GrowthPanel = modesView
    ? {
        section: modesView,
        ...(has("evidence.cases")
          ? {}
          : {
              empty: `Representative cases with their images and attention overlays are picked at the end of the run${ended ? "; this run stopped before that." : "."}`,
            }),
      }
    : {
        empty: !m2Done
          ? ended
            ? "This run stopped before M2, so no failure modes were found (they are clustered from the exploration split's failing cases after M2)."
            : "Failure modes are clustered from the exploration split's failing cases once M2 has measured them; they show here then."
          : agentic && !clustered
            ? ended
              ? "No failure modes: the judge never called cluster_failures in this run."
              : "No failure modes yet: the judge has not called cluster_failures (it may later)."
            : agentic
              ? "No failure modes: cluster_failures ran and found none to report (its turn in the judge's path says why)."
              : "No failure modes: clustering was off for this run, or no exploration case failed.",
      };
  const lessonsView = report ? lessonsSection(report) : undefined;
  const lessons: GrowthPanel = lessonsView
    ? {
        section: lessonsView,
        ...(has("lessons.recorded")
          ? {}
          : {
              empty: ended
                ? "This run stopped before its end, so it left no lessons."
                : "The lessons this run leaves are drawn at its end and listed here then.",
            }),
      }
    : {
        empty: agentic
          ? "The judge-decided loop reads and leaves no lessons: they order the fixed loop's analyzers and hypotheses."
          : pastSetup || ended
            ? "This run read no lessons store (the CLI's --lessons none), so it used none and left none."
            : "Lessons of earlier runs on a similar model or dataset are read as the run sets up; they show here then.",
      };
  return { probes, modes, lessons, ...(failure ? { failure } : {}) };
}
