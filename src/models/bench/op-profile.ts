/**
 * Where a forward's kernel time goes, per operator type, from ONNX Runtime's own profiler: the same events on
 * onnxruntime-node (a JSON file) and -web (WASM prints them to the console), read the same way.
 */

/** One event of ONNX Runtime's profile (Chrome's trace format), as both runtimes write it. */
export interface OrtProfileEvent {
  readonly cat?: string;
  readonly name?: string;
  /** Microseconds. */
  readonly dur?: number;
  readonly args?: { readonly op_name?: string };
}

/**
 * Microseconds per execution of each operator type: for every graph node, the median of its kernel times over the
 * last `tail` share of its executions (the first ones run before V8, or the caches, have warmed up), summed over the
 * nodes of that type. A node that runs once per forward so adds its typical time once.
 *
 * @example
 * opKernelTimes([{ cat: "Node", name: "conv1_kernel_time", dur: 30, args: { op_name: "Conv" } }, …])
 * // → Map { "Conv" → 30, "Gelu" → 19, … }
 */
export function opKernelTimes(events: readonly OrtProfileEvent[], tail = 0.5): Map<string, number> {
  if (!(tail > 0 && tail <= 1)) throw new Error(`opKernelTimes: tail must be in (0, 1], got ${tail}`);
  const byNode = new Map<string, { op: string; times: number[] }>();
  for (const e of events) {
    if (e.cat !== "Node" || !e.name?.endsWith("_kernel_time") || typeof e.dur !== "number") continue;
    const op = e.args?.op_name ?? "?";
    const node = `${op} ${e.name}`;
    let entry = byNode.get(node);
    if (!entry) byNode.set(node, (entry = { op, times: [] }));
    entry.times.push(e.dur);
  }
  const out = new Map<string, number>();
  for (const { op, times } of byNode.values()) {
    const last = times.slice(Math.floor(times.length * (1 - tail))).sort((a, b) => a - b);
    out.set(op, (out.get(op) ?? 0) + last[last.length >> 1]!);
  }
  return out;
}

/**
 * The profile events in text ONNX Runtime printed: one JSON object per line, each maybe followed by a comma (the
 * WASM build prints its trace file's lines to the console); other lines are skipped.
 *
 * @example profileEventsInText('{"cat":"Node","name":"a_kernel_time","dur":3},\nhello') // → [{ cat: "Node", … }]
 */
export function profileEventsInText(text: string): OrtProfileEvent[] {
  const out: OrtProfileEvent[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim().replace(/,$/, "");
    if (!line.startsWith("{") || !line.endsWith("}")) continue;
    try {
      out.push(JSON.parse(line) as OrtProfileEvent);
    } catch {
      // a console line that only looks like an event
    }
  }
  return out;
}

/**
 * Lines comparing two runtimes' kernel times per operator type, the largest on the page first: µs on each side and
 * their ratio, then the totals.
 *
 * @example opComparisonLines(pageTimes, nodeTimes) // ["Conv            652 µs vs    82 µs → 7.95×", …]
 */
export function opComparisonLines(page: ReadonlyMap<string, number>, node: ReadonlyMap<string, number>): string[] {
  const ops = [...new Set([...page.keys(), ...node.keys()])].sort((a, b) => (page.get(b) ?? 0) - (page.get(a) ?? 0));
  const row = (op: string, p: number, n: number) =>
    `${op.padEnd(22)} ${p.toFixed(0).padStart(6)} µs vs ${n.toFixed(0).padStart(5)} µs → ${n > 0 ? `${(p / n).toFixed(2)}×` : "—"}`;
  const sum = (m: ReadonlyMap<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  return [...ops.map((op) => row(op, page.get(op) ?? 0, node.get(op) ?? 0)), row("all kernels", sum(page), sum(node))];
}
