import { flushSync, mount, unmount } from "svelte";
import { afterEach, expect, it } from "vitest";
import "../../styles/tokens.css";
import "../../styles/base.css";
import Code from "./Code.svelte";

let mounted: ReturnType<typeof mount> | undefined;
afterEach(() => {
  if (mounted) unmount(mounted);
  mounted = undefined;
  document.body.innerHTML = "";
});

/** How many lines `text` takes as a Code identifier in a column `width` px wide. */
function lines(text: string, width: number): number {
  document.body.innerHTML = "";
  const column = document.createElement("div");
  column.style.width = `${width}px`;
  document.body.append(column);
  if (mounted) unmount(mounted);
  mounted = mount(Code, { target: column, props: { text } });
  flushSync();
  const code = column.querySelector("code")!;
  const tops = new Set([...code.getClientRects()].map((r) => Math.round(r.top)));
  return tops.size;
}

it("keeps a mode id whole in a column narrower than it (it wrapped as 'mode-' / '1')", () => {
  expect(lines("mode-1", 10)).toBe(1);
  expect(lines("mode-12", 10)).toBe(1);
});

it("still breaks a long signal name after its dots, in a narrow column", () => {
  expect(lines("logitLens.answerProb.S2", 60)).toBeGreaterThan(1);
  expect(lines("logitLens.answerProb.S2", 600)).toBe(1);
});
