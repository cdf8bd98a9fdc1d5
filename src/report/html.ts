/**
 * The self-contained HTML export of a report: one file, inline CSS and SVG
 * figures, no script, no network. Every string from the report is escaped
 * (a report is untrusted data), and numbers are formatted, never injected.
 */
import type { Report, ReportHypothesis, ReportRepair, ReportSignal } from "./schema.ts";

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
}

function n(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "—";
  const a = Math.abs(x);
  if (a !== 0 && (a >= 1e4 || a < 1e-3)) return x.toExponential(2);
  return x.toFixed(digits);
}

function svgNum(x: number): string {
  return Number.isFinite(x) ? x.toFixed(1) : "0";
}

const COLORS = { fail: "#c0392b", pass: "#2e86de", explore: "#7f8c8d", sealed: "#16a085", axis: "#555" };

/** A forest plot: each hypothesis' effect with its interval, exploration vs sealed, against the null. */
function forest(hypotheses: readonly ReportHypothesis[]): string {
  if (!hypotheses.length) return "";
  const rowH = 34,
    left = 160,
    width = 640,
    plotW = width - left - 20;
  const height = hypotheses.length * rowH + 40;
  // Each effect is drawn as its distance from the null, so AUC and risk difference share one axis.
  const values = hypotheses.flatMap((h) =>
    [h.exploreEffect.lo, h.exploreEffect.hi, h.sealedEffect?.lo, h.sealedEffect?.hi]
      .filter((x): x is number => typeof x === "number" && Number.isFinite(x))
      .map((x) => x - h.exploreEffect.nullValue),
  );
  const span = Math.max(0.05, ...values.map(Math.abs)) * 1.1;
  const xOf = (d: number) => left + ((d + span) / (2 * span)) * plotW;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="effects with 95% intervals">`,
    `<line x1="${svgNum(xOf(0))}" y1="10" x2="${svgNum(xOf(0))}" y2="${height - 25}" stroke="${COLORS.axis}" stroke-dasharray="4 3"/>`,
    `<text x="${svgNum(xOf(0))}" y="${height - 8}" font-size="11" text-anchor="middle">null</text>`,
    `<text x="${svgNum(xOf(-span))}" y="${height - 8}" font-size="11">${n(-span, 2)}</text>`,
    `<text x="${svgNum(xOf(span))}" y="${height - 8}" font-size="11" text-anchor="end">+${n(span, 2)}</text>`,
  ];
  hypotheses.forEach((h, i) => {
    const y = 20 + i * rowH;
    const nul = h.exploreEffect.nullValue;
    parts.push(`<text x="4" y="${y + 9}" font-size="12">${escapeHtml(`${h.id} ${h.signal}`.slice(0, 24))}</text>`);
    const bar = (lo: number | null, hi: number | null, value: number | null, dy: number, color: string) => {
      if (lo === null || hi === null || value === null || !Number.isFinite(lo) || !Number.isFinite(hi)) return;
      parts.push(
        `<line x1="${svgNum(xOf(lo - nul))}" y1="${y + dy}" x2="${svgNum(xOf(hi - nul))}" y2="${y + dy}" stroke="${color}" stroke-width="2"/>`,
        `<circle cx="${svgNum(xOf(value - nul))}" cy="${y + dy}" r="4" fill="${color}"/>`,
      );
    };
    bar(h.exploreEffect.lo, h.exploreEffect.hi, h.exploreEffect.value, 2, COLORS.explore);
    if (h.sealedEffect) bar(h.sealedEffect.lo, h.sealedEffect.hi, h.sealedEffect.value, 14, COLORS.sealed);
  });
  parts.push("</svg>");
  return parts.join("");
}

/** A signal's distribution by label: overlaid histograms, or failure shares with and without a binary signal. */
function signalFigure(s: ReportSignal): string {
  const fig = s.figure;
  if (!fig) return "";
  const w = 260,
    h = 90;
  if (fig.type === "counts") {
    const rate = ([f, t]: readonly [number, number]) => (t ? f / t : 0);
    const bars = [
      { label: "with", r: rate(fig.withSignal), t: fig.withSignal[1] },
      { label: "without", r: rate(fig.without), t: fig.without[1] },
    ];
    return (
      `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" role="img" aria-label="failure share with and without the signal">` +
      bars
        .map(
          (b, i) =>
            `<rect x="70" y="${10 + i * 36}" width="${svgNum(b.r * 170)}" height="24" fill="${COLORS.fail}"/>` +
            `<text x="2" y="${27 + i * 36}" font-size="11">${b.label}</text>` +
            `<text x="${svgNum(74 + b.r * 170)}" y="${27 + i * 36}" font-size="11">${n(b.r * 100, 0)}% of ${b.t}</text>`,
        )
        .join("") +
      "</svg>"
    );
  }
  const k = fig.fail.length;
  const share = (xs: readonly number[]) => {
    const total = xs.reduce((a, b) => a + b, 0) || 1;
    return xs.map((x) => x / total);
  };
  const f = share(fig.fail),
    p = share(fig.pass);
  const top = Math.max(...f, ...p, 1e-9);
  const bw = (w - 10) / k;
  const bars = (xs: number[], color: string, off: number) =>
    xs
      .map(
        (x, i) =>
          `<rect x="${svgNum(5 + i * bw + off)}" y="${svgNum(h - 15 - (x / top) * (h - 25))}" width="${svgNum(bw / 2 - 1)}" height="${svgNum((x / top) * (h - 25))}" fill="${color}"/>`,
      )
      .join("");
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" role="img" aria-label="distribution by label">` +
    bars(f, COLORS.fail, 0) +
    bars(p, COLORS.pass, bw / 2) +
    `<text x="5" y="${h - 2}" font-size="10">${n(fig.edges[0] ?? NaN, 2)}</text>` +
    `<text x="${w - 5}" y="${h - 2}" font-size="10" text-anchor="end">${n(fig.edges[fig.edges.length - 1] ?? NaN, 2)}</text>` +
    "</svg>"
  );
}

/** A grid of non-negative values as a heatmap (darker = more), e.g. attention over the image patches. */
function heatmap(values: readonly (number | null)[], rows: number, cols: number, title: string): string {
  const cell = 22;
  const finite = values.filter((x): x is number => typeof x === "number" && Number.isFinite(x));
  const top = Math.max(1e-12, ...finite);
  const rects: string[] = [];
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      const v = values[r * cols + c];
      const t = typeof v === "number" && Number.isFinite(v) ? v / top : 0;
      rects.push(
        `<rect x="${c * cell}" y="${16 + r * cell}" width="${cell - 1}" height="${cell - 1}" fill="rgb(${Math.round(255 - 200 * t)},${Math.round(255 - 150 * t)},${Math.round(255 - 60 * t)})"/>`,
      );
    }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${Math.max(cols * cell, 7 * title.length)}" height="${rows * cell + 18}" role="img" aria-label="${escapeHtml(title)}"><text x="0" y="12" font-size="11">${escapeHtml(title)}</text>${rects.join("")}</svg>`;
}

/** Repairs: each candidate's change in failure rate vs the baseline. */
function repairChart(candidates: readonly ReportRepair[]): string {
  if (!candidates.length) return "";
  const w = 640,
    rowH = 26,
    left = 220,
    h = candidates.length * rowH + 30;
  const span = Math.max(0.05, ...candidates.map((c) => Math.abs(c.delta ?? 0))) * 1.1;
  const xOf = (d: number) => left + ((d + span) / (2 * span)) * (w - left - 20);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" role="img" aria-label="repair effects">` +
    `<line x1="${svgNum(xOf(0))}" y1="5" x2="${svgNum(xOf(0))}" y2="${h - 20}" stroke="${COLORS.axis}"/>` +
    candidates
      .map((c, i) => {
        const d = c.delta ?? 0;
        const x0 = Math.min(xOf(0), xOf(d));
        return (
          `<text x="2" y="${20 + i * rowH}" font-size="11">${escapeHtml(`${c.tier} ${c.candidate}`.slice(0, 34))}</text>` +
          `<rect x="${svgNum(x0)}" y="${8 + i * rowH}" width="${svgNum(Math.abs(xOf(d) - xOf(0)))}" height="16" fill="${c.validated ? COLORS.sealed : COLORS.explore}"/>`
        );
      })
      .join("") +
    `<text x="${svgNum(xOf(0))}" y="${h - 5}" font-size="10" text-anchor="middle">0 (fixed − broken) / n</text>` +
    "</svg>"
  );
}

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  return `<table><thead><tr>${head.map((x) => `<th>${escapeHtml(x)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((x) => `<td>${x}</td>`).join("")}</tr>`)
    .join("")}</tbody></table>`;
}

/**
 * The report as one self-contained HTML page (figures drawn as inline SVG; no
 * script, no external resource). Strings from the report are escaped.
 *
 * Example: `renderReportHtml(report)` → `"<!doctype html><html lang=\"en\">…"`.
 */
export function renderReportHtml(report: Report): string {
  const e = escapeHtml;
  const p = report.provenance;
  const verdictClass = (v: string) => (v === "SUPPORTED" ? "ok" : v === "REFUTED" ? "bad" : "meh");
  const sections: string[] = [];
  sections.push(
    `<h1>EvalRx ${e(report.kind)} report</h1>`,
    `<p class="q">${e(report.question)}</p>`,
    report.complete ? "" : `<p class="warn">This run did not finish: the report shows what the log holds so far.</p>`,
    table(
      ["run", "data", "cases", "failures", "holdout", "seed", "α", "code"],
      [
        [
          e(report.runId),
          `${e(p.data.source)} <code>${e(p.data.fingerprint)}</code>${p.data.sampled ? `<br>${e(p.data.sampled)}` : ""}`,
          e(p.data.n),
          `${e(p.data.labelDistribution.fail)} (${n((100 * p.data.labelDistribution.fail) / Math.max(1, p.data.n), 1)}%)`,
          p.holdout
            ? `${e(p.holdout.fraction)} by ${e(p.holdout.by)}: explore ${e(p.holdout.exploreN)}, sealed ${e(p.holdout.sealedN)}`
            : "—",
          e(p.seed),
          e(p.alpha),
          e(p.codeVersion),
        ],
      ],
    ),
  );
  if (p.model) sections.push(`<p>Model: <code>${e(JSON.stringify(p.model))}</code></p>`);
  if (report.probe) {
    const pr = report.probe;
    sections.push(
      `<h2>M1 probe</h2><p>${e(pr.cases)} cases, ${e(pr.failures)} fail; model kind ${e(pr.modelKind)}.</p>`,
      table(
        ["analyzer", "rank", "tags", "ran"],
        pr.analyzers.map((a) => [
          e(a.name),
          e(a.rank),
          e(a.tags.join(", ")),
          a.ran ? "yes" : e(`no: ${a.reason ?? ""}`),
        ]),
      ),
      pr.findings.length
        ? `<ul>${pr.findings.map((f) => `<li><b>${e(f.analyzer)}</b>: ${e(f.summary)}</li>`).join("")}</ul>`
        : "",
      pr.maps
        ? `<p>${heatmap(pr.maps.fail, pr.maps.rows, pr.maps.cols, "rollout to the image, failures")} &nbsp; ${heatmap(pr.maps.pass, pr.maps.rows, pr.maps.cols, "rollout to the image, passes")}</p>`
        : "",
    );
  }
  sections.push(
    `<h2>Verdicts (M4, sealed split)</h2>`,
    report.hypotheses.length
      ? table(
          [
            "",
            "signal",
            "direction",
            "explore effect",
            "sealed n",
            "test (unit)",
            "sealed effect [95%]",
            "e-value",
            "verdict",
          ],
          report.hypotheses.map((h) => [
            e(h.id),
            e(h.signal),
            e(h.direction),
            `${e(h.exploreEffect.name)} ${n(h.exploreEffect.value)}`,
            e(h.sealedN ?? "—"),
            `${e(h.test)} (${e(h.unit ?? "case")}${h.clusters !== undefined ? `, ${e(h.clusters)} clusters` : ""})`,
            h.sealedEffect ? `${n(h.sealedEffect.value)} [${n(h.sealedEffect.lo)}, ${n(h.sealedEffect.hi)}]` : "—",
            n(h.eValue),
            `<span class="${verdictClass(h.verdict)}">${e(h.verdict)}</span>`,
          ]),
        )
      : `<p>No hypothesis: no signal passed the screen on the exploration split${report.problems.length ? " (see “What could not be tested, and why” below)" : ""}.</p>`,
    forest(report.hypotheses),
    report.hypotheses.length
      ? `<p class="legend"><span style="color:${COLORS.explore}">●</span> exploration <span style="color:${COLORS.sealed}">●</span> sealed — distance from the null</p>`
      : "",
  );
  for (const h of report.hypotheses) {
    sections.push(
      `<h3>${e(h.id)}: ${e(h.mechanism)}</h3>`,
      `<p>${e(h.statement)}</p><p><b>Refutation:</b> ${e(h.refutation)}</p>`,
      `<p><b>${e(h.verdict)}</b>: ${e(h.reason)}</p>`,
      `<p class="small">Evidence chain: stated at event #${e(h.evidence.stated)}, frozen at #${e(h.evidence.frozen ?? "—")}, sealed split opened at #${e(h.evidence.sealedOpened ?? "—")}, decided at #${e(h.evidence.decided ?? "—")}. Test: ${e(h.testDescription ?? h.test)}; ${e(h.eMethod)}.</p>`,
    );
  }
  if (report.intervention) {
    const iv = report.intervention;
    sections.push(
      `<h2>M5 mechanism test</h2><p>${e(iv.description)}</p>`,
      table(
        [
          "hypothesis",
          "n",
          "baseline failures",
          "with intervention",
          "Δ",
          "test (unit)",
          "p",
          "e",
          "yes-ratio",
          "causal",
        ],
        [
          [
            e(iv.hypothesis),
            e(iv.n),
            e(iv.baselineFailures),
            e(iv.interventionFailures),
            n(iv.delta),
            `${e(iv.test ?? "mcnemar")} (${e(iv.unit ?? "case")})`,
            n(iv.p),
            n(iv.e),
            iv.yesRatio !== undefined ? `${n(iv.baselineYesRatio ?? null)} → ${n(iv.yesRatio)}` : "—",
            iv.causal ? "yes" : "no",
          ],
        ],
      ),
      `<p>${e(iv.note)}</p>`,
    );
  }
  if (report.repairs) {
    const r = report.repairs;
    sections.push(
      `<h2>Repair ladder (ceiling ${e(r.maxTier)})</h2>`,
      r.cases || r.budget
        ? `<p class="small">${r.cases ? `Cases: ${e(r.cases)}. ` : ""}${r.budget ? `One α budget: ${e(r.budget.tests)} tests at γ = α/${e(r.budget.tests)} = ${n(r.budget.gamma)} each.` : ""}</p>`
        : "",
      table(
        [
          "tier",
          "candidate",
          "n",
          "fixed",
          "broken",
          "Δ failure rate",
          "test (unit)",
          "p",
          "e",
          "yes-ratio",
          "vs yes-bias control",
          "by split (fixed/broken)",
          "validated",
        ],
        r.candidates.map((c) => [
          e(c.tier),
          `${e(c.candidate)}<br><span class="small">${e(c.description)}</span>`,
          e(c.n),
          e(c.fixed),
          e(c.broken),
          n(c.delta),
          `${e(c.test ?? "mcnemar")} (${e(c.unit ?? "case")})`,
          n(c.p),
          n(c.e),
          c.yesRatio !== undefined ? `${n(c.baselineYesRatio ?? null)} → ${n(c.yesRatio)}` : "—",
          c.control
            ? `${c.control.beaten ? "beaten" : "not beaten"}: fixed ${e(c.control.fixed)} / broken ${e(c.control.broken)}, p ${n(c.control.p)} (control yes-ratio ${n(c.control.yesRatio)})`
            : "—",
          c.bySplit
            ? Object.entries(c.bySplit)
                .map(([k, v]) => `${e(k)} ${e(v.fixed)}/${e(v.broken)}`)
                .join(", ")
            : "—",
          c.validated ? `<span class="ok">yes</span>` : "no",
        ]),
      ),
      repairChart(r.candidates),
      `<p><b>Outcome:</b> ${r.fixedBy ? `fixed by ${e(r.fixedBy)}` : "no candidate validated"}. ${e(r.recommendation)}</p>`,
      r.recipe
        ? `<h3>L4 fine-tune recipe (written, not executed)</h3><pre>${e(JSON.stringify(r.recipe, null, 2))}</pre>`
        : "",
    );
  }
  const shown = [...report.signals.tested].sort((a, b) => (b.e ?? 0) - (a.e ?? 0));
  sections.push(
    `<h2>M2 signals on the exploration split</h2>`,
    `<p>${e(report.signals.tried)} signals tried; ${e(report.signals.procedure)}; selected: ${e(report.signals.selected.join(", ") || "none")}.</p>`,
    table(
      ["signal", "kind", "test", "n", "effect", "95% interval", "p", "e", "selected", "by label"],
      shown.map((s) => [
        e(s.signal),
        e(s.kind),
        e(s.test),
        e(s.n),
        `${e(s.effect.name)} ${n(s.effect.value)}`,
        `[${n(s.effect.lo)}, ${n(s.effect.hi)}]`,
        n(s.p),
        n(s.e),
        s.selected ? `<span class="ok">yes</span>` : s.untestable ? e(s.untestable) : "no",
        signalFigure(s),
      ]),
    ),
    `<p class="legend"><span style="color:${COLORS.fail}">■</span> failing cases <span style="color:${COLORS.pass}">■</span> passing cases</p>`,
  );
  if (report.signals.layers?.length)
    sections.push(
      `<h3>Across layers (Friedman, exploration split; descriptive)</h3>`,
      table(
        ["signal", "layers", "n", "Friedman χ²", "p", "e", "AUC per layer", "strongest"],
        report.signals.layers.map((l) => [
          e(l.family),
          e(l.layers.join(", ")),
          e(l.n),
          n(l.statistic, 2),
          n(l.p),
          n(l.e),
          e(l.auc.map((a) => n(a)).join(", ")),
          e(l.strongest),
        ]),
      ),
    );
  if (report.signals.untestable.length || report.problems.length)
    sections.push(
      `<h2>What could not be tested, and why</h2><ul>${[
        ...report.problems.map((x) => `<li><b>${e(x.what)}</b>: ${e(x.why)}</li>`),
        ...report.signals.untestable.map((x) => `<li><b>${e(x.name)}</b>: ${e(x.reason)}</li>`),
      ].join("")}</ul>`,
    );
  sections.push(
    `<h2>Methods and timing</h2><ul>${report.eValueMethods.map((m) => `<li>${e(m)}</li>`).join("")}</ul>`,
    table(
      ["stage", "ms"],
      report.stages.map((s) => [e(s.stage), e(s.ms)]),
    ),
    `<p class="small">Report format ${e(report.format)} v${e(report.version)}; created ${e(report.createdAt)}${report.finishedAt ? `, finished ${e(report.finishedAt)}` : ""}.</p>`,
  );
  const css = `body{font:14px/1.45 system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ddd;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#f4f4f4}.ok{color:#16a085;font-weight:600}.bad{color:#c0392b;font-weight:600}.meh{color:#b7950b;font-weight:600}
.q{font-size:1.1em;font-style:italic}.warn{background:#fdebd0;padding:.5em}.small{font-size:12px;color:#555}pre{background:#f7f7f7;padding:.6em;overflow:auto}`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"><title>EvalRx report ${e(report.runId)}</title><style>${css}</style></head><body>${sections.join("\n")}</body></html>\n`;
}
