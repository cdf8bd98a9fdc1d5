/**
 * The attention status the worker reports, in words — whatever its shape:
 * the runtime's `{ kind, tensors | reason }`, or the richer status with
 * where each softmax was found, fused ops met and advice. Unknown fields are
 * kept as "details" so nothing the runtime says is hidden.
 */

/** One line each: the verdict, then the facts behind it. */
export interface AttentionLines {
  /** "found" (readable), "not readable", or "unknown" (not loaded yet). */
  readonly state: "found" | "not readable" | "unknown";
  /** The headline: "exported by the model (2 outputs)", "fused MultiHeadAttention: …". */
  readonly headline: string;
  /** Further facts: where it was found, fused ops, why not, what to do. */
  readonly details: readonly string[];
}

type Json = Record<string, unknown>;

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);

/**
 * Turns an attention status into lines to show.
 *
 * @example
 * attentionLines({ kind: "unreadable", reason: "fused MultiHeadAttention" })
 * // → { state: "not readable", headline: "fused MultiHeadAttention", details: [] }
 */
export function attentionLines(status: unknown): AttentionLines {
  if (!status || typeof status !== "object")
    return { state: "unknown", headline: "read from the graph when loaded", details: [] };
  const s = status as Json;
  const details: string[] = [];
  const shown = new Set<string>();
  const take = (key: string) => {
    shown.add(key);
    return s[key];
  };
  let headline: string;
  const kind = text(take("kind")) ?? text(take("source"));
  const readable = typeof s.readable === "boolean" ? (take("readable") as boolean) : kind !== "unreadable";
  const state: AttentionLines["state"] =
    readable && kind ? "found" : kind || typeof s.readable === "boolean" ? "not readable" : "unknown";
  const found = typeof s.found === "number" ? (take("found") as number) : undefined;
  const expected = typeof s.expected === "number" ? (take("expected") as number) : undefined;
  const tensors = list(take("tensors")).map(String);
  const count =
    found !== undefined
      ? `${found}${expected ? ` of ${expected}` : ""} attention tensor${found === 1 ? "" : "s"}`
      : tensors.length
        ? `${tensors.length} attention tensor${tensors.length === 1 ? "" : "s"}`
        : undefined;
  const reason = text(take("reason"));
  switch (kind) {
    case "exported":
      headline = `exported by the model as graph outputs${count ? ` (${count})` : ""}`;
      break;
    case "tapped":
      headline = `found in the graph and added as outputs (tapped${count ? `: ${count}` : ""})`;
      break;
    case "decomposed":
      headline = `fused attention rewritten into standard ops, then tapped${count ? ` (${count})` : ""}`;
      break;
    case "unreadable":
      headline = reason ?? "no attention tensor can be returned";
      break;
    default:
      headline = reason ?? (state === "unknown" ? "read from the graph when loaded" : (kind ?? "unknown"));
  }
  if (kind !== "unreadable" && reason && headline !== reason) details.push(`why partly: ${reason}`);
  if (tensors.length) details.push(`tensors: ${tensors.join(", ")}`);
  const file = text(take("file"));
  if (file) details.push(`graph: ${file}`);
  const wheres = new Set<string>();
  for (const site of list(take("sites")))
    for (const place of list((site as Json)?.places)) {
      const where = text((place as Json)?.where);
      if (where) wheres.add(where);
    }
  if (wheres.size) details.push(`found in: ${[...wheres].join("; ")}`);
  for (const op of list(take("fused"))) {
    const o = op as Json;
    if (!o || typeof o !== "object") continue;
    const name = `${text(o.op) ?? "fused op"}${text(o.node) ? ` '${text(o.node)}'` : ""}${text(o.where) ? ` in ${text(o.where)}` : ""}`;
    details.push(
      o.decomposed
        ? `fused ${name}: decomposed${text(o.variant) ? ` (${text(o.variant)})` : ""}`
        : `fused ${name}: not decomposed${text(o.reason) ? ` — ${text(o.reason)}` : ""}`,
    );
  }
  if (s.fused && typeof s.fused === "object" && !Array.isArray(s.fused))
    for (const [op, n] of Object.entries(s.fused as Json)) details.push(`fused ${op} × ${String(n)}`);
  for (const fn of list(take("inlined"))) {
    const f = fn as Json;
    if (text(f?.function)) details.push(`inlined function ${text(f.function)} (${String(f.calls ?? "?")} calls)`);
  }
  for (const u of list(take("unreachable"))) {
    const x = u as Json;
    details.push(`unreachable${text(x?.where) ? ` in ${text(x.where)}` : ""}: ${text(x?.reason) ?? "?"}`);
  }
  for (const key of ["untappable", "softmaxes"]) if (Array.isArray(s[key])) take(key);
  const advice = text(take("advice"));
  if (advice) details.push(`to fix: ${advice}`);
  take("layers");
  take("writable");
  for (const [key, value] of Object.entries(s))
    if (!shown.has(key) && value !== undefined && !(key === "fused" && typeof value === "object"))
      details.push(`${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
  return { state, headline, details };
}
