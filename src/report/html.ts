/**
 * The self-contained HTML export of a report: the report's view (`view.ts`,
 * the same one the page renders) serialized into one file — inline CSS, the
 * figures as inline SVG from `toSvg` (the figure module's own writer, the
 * same scenes the page draws), images as data: URLs, no script, no network.
 *
 * Escaping happens at one point: `escapeHtml`, called on every string the
 * view holds, here and nowhere else; the view never carries markup. The SVG
 * strings come from `toSvg`, which escapes their text itself. A strict
 * Content-Security-Policy forbids scripts and any request the file could make.
 */
import { toSvg } from "../figures/to-svg.ts";
import type { SceneTable } from "../figures/scene.ts";
import type { Report } from "./schema.ts";
import {
  reportView,
  type Block,
  type Cell,
  type EvidenceCaseView,
  type EvidenceView,
  type FigureView,
  type ReportView,
  type SectionView,
  type Span,
  type TableView,
} from "./view.ts";

/**
 * Text made safe for HTML element content and attribute values.
 *
 * @example escapeHtml('<b title="x">') // "&lt;b title=&quot;x&quot;&gt;"
 */
export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
}

const e = escapeHtml;

/**
 * Escaped code text that may break only after the dots, underscores, `=` and `/` that join identifiers: each
 * part between them is kept whole, so an id such as `mode-1` never breaks at its hyphen.
 */
const code = (text: string) =>
  `<code>${text
    .split(/(?<=[._=/])/)
    .map((part) => `<span class="w">${e(part)}</span>`)
    .join("<wbr>")}</code>`;

/** The export's figure width (px): the body's column less its padding. */
export const EXPORT_FIGURE_WIDTH = 960;

function spans(list: readonly Span[]): string {
  return list
    .map((s) => {
      let out = e(s.text);
      if (s.code) out = code(s.text);
      if (s.strong) out = `<strong>${out}</strong>`;
      if (s.tone) out = `<span class="tone-${s.tone}">${out}</span>`;
      return out;
    })
    .join("");
}

function cell(c: Cell): string {
  switch (c.kind) {
    case "text":
      return `${c.code ? code(c.text) : e(c.text)}${c.sub ? `<div class="sub">${e(c.sub)}</div>` : ""}`;
    case "number":
      return e(c.text);
    case "verdict":
      return `<span class="verdict tone-${c.tone}">${e(c.text)}</span>`;
    case "badge":
      return `<span class="badge tone-${c.tone}">${e(c.text)}</span>`;
    case "figure":
      return figure(c.figure);
  }
}

function table(t: TableView): string {
  const align = (i: number) => (t.columns[i]?.align === "right" ? ' class="num"' : "");
  return (
    `<div class="table-wrap"><table id="table-${e(t.id)}"><caption>${e(t.caption)}</caption>` +
    `<thead><tr>${t.columns.map((c, i) => `<th scope="col"${align(i)}>${e(c.label)}</th>`).join("")}</tr></thead>` +
    `<tbody>${t.rows.map((r) => `<tr>${r.cells.map((c, i) => `<td${align(i)}>${cell(c)}</td>`).join("")}</tr>`).join("")}</tbody>` +
    `</table></div>`
  );
}

/** A figure's table: its text alternative, one click away under the figure. */
function sceneTable(t: SceneTable): string {
  const align = (i: number) => (t.columns[i]?.align === "right" ? ' class="num"' : "");
  return (
    `<details class="alt"><summary>${e(t.caption)} (the figure as a table)</summary><div class="table-wrap"><table>` +
    `<thead><tr>${t.columns.map((c, i) => `<th scope="col"${align(i)}>${e(c.label)}</th>`).join("")}</tr></thead>` +
    `<tbody>${t.rows.map((r) => `<tr>${r.map((x, i) => `<td${align(i)}>${e(x)}</td>`).join("")}</tr>`).join("")}</tbody>` +
    `</table></div></details>`
  );
}

function figure(f: FigureView): string {
  return (
    `<figure class="fig" id="figure-${e(f.id)}"><figcaption class="fig-title">${e(f.title)}</figcaption>` +
    `<div class="fig-svg">${toSvg(f.scene)}</div>` +
    (f.caption ? `<p class="fig-caption">${e(f.caption)}</p>` : "") +
    sceneTable(f.scene.table) +
    `</figure>`
  );
}

function evidenceCase(c: EvidenceCaseView, valueLabel = "Signal value"): string {
  const tone = c.passed ? "pass" : "fail";
  let picture = "";
  if (c.image?.src || c.overlay) {
    const size = c.overlay?.size ?? 160;
    const img = c.image?.src
      ? `<img src="${e(c.image.src)}" alt="${e(c.image.alt)}" width="${size}" height="${size}">`
      : `<div class="no-image" style="width:${size}px;height:${size}px">image not in the report</div>`;
    picture = `<div class="overlay">${img}${c.overlay ? toSvg(c.overlay.scene) : ""}</div>`;
  } else if (c.image) picture = `<p class="sub">Image ${e(c.image.ref)} is not in the report.</p>`;
  return (
    `<article class="case case-${tone}"><header><span class="badge tone-${tone}">${c.passed ? "pass" : "fail"}</span> ` +
    `${code(c.id)}${c.split ? ` <span class="sub">${e(c.split)}</span>` : ""}</header>${picture}` +
    `<dl><dt>Question</dt><dd>${e(c.prompt)}</dd><dt>Answer</dt><dd>${e(c.answer)}</dd>` +
    `<dt>Expected</dt><dd>${e(c.expected)}</dd><dt>${e(valueLabel)}</dt><dd>${e(c.value)}</dd></dl>` +
    (c.overlay ? sceneTable(c.overlay.scene.table) : "") +
    `</article>`
  );
}

function evidence(v: EvidenceView): string {
  return v.groups
    .map(
      (g) =>
        `<div class="evidence" id="${e(v.id)}-${g.passed ? "pass" : "fail"}"><h4>${e(g.title)}</h4>` +
        `<div class="cases">${g.cases.map((c) => evidenceCase(c, v.valueLabel)).join("")}</div></div>`,
    )
    .join("");
}

function block(b: Block): string {
  switch (b.kind) {
    case "paragraph":
      return `<p${b.small ? ' class="small"' : ""}>${spans(b.spans)}</p>`;
    case "facts":
      return `<dl class="facts" id="facts-${e(b.id)}">${b.items.map((i) => `<dt>${e(i.label)}</dt><dd>${cell(i.value)}</dd>`).join("")}</dl>`;
    case "table":
      return table(b.table);
    case "figure":
      return figure(b.figure);
    case "list":
      return `<ul>${b.items.map((i) => `<li>${spans(i)}</li>`).join("")}</ul>`;
    case "note":
      return `<p class="note tone-${b.tone}">${spans(b.spans)}</p>`;
    case "code":
      return `<h4>${e(b.label)}</h4><pre>${e(b.text)}</pre>`;
    case "evidence":
      return evidence(b.evidence);
  }
}

function section(s: SectionView, level: number): string {
  const h = `h${Math.min(6, level)}`;
  return (
    `<section id="${e(s.id)}"><${h}>${e(s.title)}</${h}>` +
    s.blocks.map(block).join("\n") +
    s.sections.map((x) => section(x, level + 1)).join("\n") +
    `</section>`
  );
}

const CSS = `:root{--text:#1d1d1f;--muted:#5a5a60;--line:#dcdce0;--panel:#f6f6f8;--pass:#0072b2;--fail:#d55e00;--warn:#8a6d00}
*{box-sizing:border-box}
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1000px;margin:2em auto;padding:0 20px;color:var(--text);overflow-wrap:break-word}
h1{font-size:1.6em;margin:.2em 0}h2{margin-top:2em;border-bottom:1px solid var(--line);padding-bottom:.2em}h3{margin-top:1.6em}h4{margin:1em 0 .4em}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--panel);padding:0 .25em;border-radius:3px}
code .w{white-space:nowrap}
.q{font-size:1.15em;font-style:italic;margin:.3em 0}
.headline{font-size:1.05em}.verdicts{display:flex;gap:.5em;flex-wrap:wrap;margin:.6em 0}
.badge,.verdict{display:inline-block;font-weight:600;font-size:12px;padding:.05em .5em;border-radius:3px;border:1px solid currentColor}
.tone-pass{color:var(--pass)}.tone-fail{color:var(--fail)}.tone-warn{color:var(--warn)}.tone-neutral{color:var(--muted)}
.note{background:var(--panel);padding:.5em .8em;border-left:3px solid var(--line)}.warn{background:#fdf3d8;padding:.5em .8em;border-left:3px solid var(--warn)}
.small,.sub,.fig-caption{font-size:12px;color:var(--muted)}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;margin:.6em 0}.facts dt{color:var(--muted)}.facts dd{margin:0}
.table-wrap{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}td,th{border-bottom:1px solid var(--line);padding:4px 8px;vertical-align:top;text-align:left}
th{background:var(--panel);font-weight:600}caption{text-align:left;font-weight:600;color:var(--muted);padding:.2em 0}.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.badge,.verdict{white-space:nowrap}
.fig{margin:1em 0}.fig-title{font-weight:600;margin-bottom:.3em}.fig-svg svg,.overlay svg{max-width:100%;height:auto;display:block}
details.alt{margin:.3em 0;font-size:12px}details.alt summary{color:var(--muted);cursor:pointer}
.cases{display:flex;flex-wrap:wrap;gap:12px}.case{width:220px;border:1px solid var(--line);border-radius:4px;padding:8px;font-size:12px}
.case-fail{border-top:3px solid var(--fail)}.case-pass{border-top:3px solid var(--pass)}
.case dl{display:grid;grid-template-columns:max-content 1fr;gap:.1em .5em;margin:.4em 0}.case dt{color:var(--muted)}.case dd{margin:0}
.overlay{position:relative;width:160px;margin:.4em 0}.overlay img{position:absolute;left:0;top:0;image-rendering:pixelated}
.overlay svg{position:relative}.no-image{position:absolute;left:0;top:0;background:var(--panel);color:var(--muted);font-size:11px;display:flex;align-items:center;justify-content:center;text-align:center}
nav.toc{font-size:13px;margin:1em 0;padding:.5em .8em;background:var(--panel)}nav.toc a{margin-right:1em}
pre{background:var(--panel);padding:.6em;overflow:auto;font-size:12px}footer{margin-top:3em;font-size:12px;color:var(--muted)}`;

/**
 * A report view as one HTML page (see the file comment: no script, no
 * external resource, every string escaped once here).
 *
 * @example viewToHtml(reportView(report)) // "<!doctype html><html lang=\"en\">…"
 */
export function viewToHtml(view: ReportView): string {
  const hd = view.header;
  const parts: string[] = [
    `<header class="report-header"><h1>${e(hd.title)}</h1>`,
    hd.question ? `<p class="q">${e(hd.question)}</p>` : "",
    hd.complete ? "" : `<p class="warn">This run did not finish: the report shows what its log holds so far.</p>`,
    `<div class="verdicts">${hd.verdicts.map((v) => `<span class="verdict tone-${v.tone}">${e(v.count)} ${e(v.verdict)}</span>`).join("")}</div>`,
    `<p class="headline">${spans(hd.headline)}</p>`,
    `<dl class="facts">${hd.facts.map((f) => `<dt>${e(f.label)}</dt><dd>${cell(f.value)}</dd>`).join("")}</dl></header>`,
    `<nav class="toc" aria-label="Sections">${view.sections.map((s) => `<a href="#${e(s.id)}">${e(s.title)}</a>`).join("")}</nav>`,
    ...view.sections.map((s) => section(s, 2)),
    `<footer>Written by EvalRx as one self-contained file: no script, nothing fetched. Every figure has its table under it.</footer>`,
  ];
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${e(view.title)}</title><style>${CSS}</style></head><body>${parts.join("\n")}</body></html>\n`
  );
}

/**
 * The report as one self-contained HTML page: its view at the export's width, serialized.
 *
 * @example renderReportHtml(report) // "<!doctype html><html lang=\"en\">…"
 */
export function renderReportHtml(report: Report): string {
  return viewToHtml(reportView(report, { width: EXPORT_FIGURE_WIDTH }));
}
