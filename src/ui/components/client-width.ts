import type { Attachment } from "svelte/attachments";

/**
 * What `bind:clientWidth` measures — an element's inner width in CSS px — reported each time it changes, without
 * forcing a layout: the width is read inside a ResizeObserver callback, which runs once the browser has laid the
 * page out anyway. `bind:clientWidth` also reads it the moment the element is mounted, which makes the browser lay
 * out the whole page inside that task: 50 ms of a 86 ms main-thread task when an investigation's M2 figure first
 * showed on a 2-core machine.
 *
 * @example
 * <figure {@attach clientWidth((w) => (measured = w))}>…</figure>
 */
export function clientWidth(report: (width: number) => void): Attachment<HTMLElement> {
  return (element) => {
    const observer = new ResizeObserver(() => report(element.clientWidth));
    observer.observe(element);
    return () => observer.disconnect();
  };
}
