/**
 * `src/figures`: figures as plain data (a `Scene`), drawn the same way by the
 * page (`src/ui/figures/Figure.svelte`) and by the HTML export (`toSvg`, in
 * Node, no DOM). One figure per file, each answering one question; marks in
 * `marks/`; colours and type in `theme.ts`; number formats in `format.ts`.
 */

// The scene and its one writer
export { walk, type Scene, type SceneNode, type SceneTable, type TableColumn } from "./scene.ts";
export { toSvg, escapeXml, num, drawable, nodeAttributes, rootAttributes, hasTips, type Attributes } from "./to-svg.ts";

// Figures
export { metricIntervals, type MetricIntervalRow, type MetricIntervalOptions } from "./metric-intervals.ts";
export { gateIntervals, type GateIntervalRow, type GateIntervalOptions } from "./gate-intervals.ts";
export { powerCurve, type PowerPoint, type PowerCurveOptions } from "./power-curve.ts";
export { calibration, type CalibrationBar, type CalibrationOptions } from "./calibration.ts";
// Report figures
export { forest, type ForestRow, type ForestInterval, type ForestOptions } from "./forest.ts";
export {
  signalDistributions,
  type SignalDistribution,
  type SignalDistributionData,
  type SignalDistributionOptions,
} from "./signal-distributions.ts";
export { attentionGrid, type AttentionMap, type AttentionGridOptions } from "./attention-grid.ts";
export { attentionOverlay, OVERLAY_LEGEND_HEIGHT, type AttentionOverlayOptions } from "./attention-overlay.ts";
export { repairLadder, netEffect, netText, type RepairLadderRow, type RepairLadderOptions } from "./repair-ladder.ts";
export { analysisFigure, type AnalysisFigureOptions } from "./analysis-figure.ts";

// Building blocks
export { axisX, axisY, type AxisOptions } from "./marks/axis.ts";
export { ruleX, ruleY, type RuleOptions } from "./marks/rule.ts";
export { intervalX, type IntervalOptions } from "./marks/interval.ts";
export { dot, type DotOptions } from "./marks/dot.ts";
export { line, type LineOptions } from "./marks/line.ts";
export { text, type TextOptions } from "./marks/text.ts";
export { barY, type BarOptions } from "./marks/bar.ts";
export { barX, type BarXOptions } from "./marks/bar-x.ts";
export { cells, type CellOptions } from "./marks/cell.ts";
export { rampLegend, type RampOptions } from "./marks/ramp.ts";
export { wrapText } from "./wrap-text.ts";
export { textWidth, fitText } from "./text-width.ts";
export { COLORS, CATEGORICAL, VERDICT_COLORS, TYPE, sequential, diverging } from "./theme.ts";
export * from "./format.ts";
