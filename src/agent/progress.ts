/**
 * One printed line per stage, as a run goes: cases and failure share, signals
 * tried, hypotheses, sealed verdicts with intervals, intervention effect,
 * each repair's Δ and p. Built from events, so the CLI and the page say the same.
 */
import { points } from "../figures/format.ts";
import type { RunEvent } from "./events.ts";

function f(x: unknown, digits = 3): string {
  return typeof x === "number" && Number.isFinite(x)
    ? Math.abs(x) >= 1e4
      ? x.toExponential(2)
      : x.toFixed(digits)
    : "—";
}

/**
 * A repair's net effect as the repair-ladder chart draws it: (fixed − broken) / n,
 * signed, positive when the candidate fixed more cases than it broke.
 *
 * @example netLine(8, 28, 210) // "net −9.5 pts: harms (fixed 8, broken 28 of 210)"
 */
export function netLine(fixed: number, broken: number, n: number): string {
  const net = n > 0 ? (fixed - broken) / n : Number.NaN;
  const what = !Number.isFinite(net) ? "not measured" : net > 0 ? "helps" : net < 0 ? "harms" : "no change";
  return `net ${net === 0 ? "0 pts" : points(net)}: ${what} (fixed ${fixed}, broken ${broken} of ${n})`;
}

/**
 * The progress line for an event, or undefined when it gets none.
 * Example: a `signals.selected` event → `"M2 explore   22 signals tried · 1 survive e-BH at α=0.05 (planted)"`.
 */
export function stageLine(event: RunEvent): string | undefined {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- payload fields are known per event type (events.schema.json)
  const p = event.payload as Record<string, any>;
  switch (event.type) {
    case "data.loaded": {
      const d = p.labelDistribution as { fail: number; pass: number };
      const n = d.fail + d.pass;
      if (n === 0)
        return `data         ${p.n} cases · fingerprint ${p.fingerprint} · labels come from M1${p.sampled ? ` · ${p.sampled}` : ""}`;
      return `data         ${n} cases · ${d.fail} fail (${f((100 * d.fail) / Math.max(1, n), 1)}%) · fingerprint ${p.fingerprint}`;
    }
    case "run.resumed":
      return `resumed      ${p.note}`;
    case "probe.finished":
      return `M1 probe     ${p.cases} cases · ${p.failures} fail (${f((100 * p.failures) / Math.max(1, p.cases), 1)}%) · model kind ${p.modelKind}`;
    case "split.made":
      return `holdout      ${(p.explore as { n: number }).n} explore · ${(p.sealed as { n: number }).n} sealed (by ${p.by})`;
    case "signals.selected": {
      const sel = p.selected as string[];
      return `M2 explore   ${p.tried} signals tried · ${(p.untestable as unknown[]).length} untestable · ${sel.length} survive e-BH at α=${p.alpha}${sel.length ? ` (${sel.slice(0, 6).join(", ")}${sel.length > 6 ? ", …" : ""})` : ""}`;
    }
    case "hypotheses.frozen":
      return `M3 diagnose  ${p.count} falsifiable hypotheses, frozen before the sealed split is read`;
    case "sealed.opened":
      return event.stage === "M4"
        ? `M4 verify    sealed n=${p.n}`
        : `M5 repair    sealed n=${p.n} (opened for repairs)`;
    case "hypothesis.decided": {
      const a = p.association as {
        effect: { name: string; value: number; interval: { lo: number; hi: number } };
        e: number;
      };
      return `  ${p.verdict === "SUPPORTED" ? "✓" : p.verdict === "REFUTED" ? "✗" : "?"} ${p.id} ${p.verdict} · ${a.effect.name} ${f(a.effect.value)} [${f(a.effect.interval.lo)}, ${f(a.effect.interval.hi)}] · e=${f(a.e, 2)}`;
    }
    case "intervention.tested":
      return `M5 intervene ${p.hypothesis}: failures ${p.baselineFailures} → ${p.interventionFailures} of ${p.n} (Δ ${f(p.delta)}) p=${f(p.p)} e=${f(p.e, 2)} ${p.causal ? "(causal)" : "(no causal effect shown)"}`;
    case "repair.tested":
      return `  ${p.validated ? "✓" : "✗"} ${p.tier} ${p.candidate}: ${netLine(p.fixed, p.broken, p.n)} p=${f(p.p)} e=${f(p.e, 2)} vs baseline`;
    case "repairs.finished":
      return `  outcome: ${p.fixedBy ? `fixed by ${p.fixedBy}` : "no candidate validated"} · ${p.recommendation}`;
    case "agentic.turn":
      return `agent ${String(p.turn).padStart(2)}     ${p.tool ?? "(unreadable reply)"} ${p.status === "ran" ? `· ${p.result}` : `refused: ${p.reason}`}`;
    case "analysis.ran":
      return `  analysis ${p.id} in the sandbox: ${p.ok ? `ran in ${p.ms} ms` : `${p.reason}: ${p.error}`}`;
    case "agentic.stopped":
      return `agent stop   ${p.success ? `success on ${p.hypothesis}` : "no claim"} (${p.by}, ${p.turns} turns, ${p.refused} refused): ${p.summary}`;
    case "problem":
      return `  ! ${p.what}: ${p.why}`;
    default:
      return undefined;
  }
}
