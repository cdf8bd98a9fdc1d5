/**
 * A figure as plain data: what every figure function returns, what `toSvg`
 * writes out as an SVG string (the HTML export, in Node) and what
 * `Figure.svelte` renders as live SVG nodes (the page). A scene holds no
 * functions and no DOM, so it can be built in a worker, sent by
 * `postMessage`, snapshot-tested, and drawn the same way in both places.
 *
 * The node set is closed (`g`, `rect`, `line`, `circle`, `path`, `text`) and
 * so are their attributes: colours come from the theme (`fill`, `stroke`
 * hold its hex values) and `class` names the role (`pass`, `fail`, `axis`…)
 * for a stylesheet to hook. `tip` is a node's full description (the hover
 * and keyboard tooltip, and its accessible name); `key` identifies it across
 * re-renders.
 */

/** Attributes every node may carry. */
export interface NodeBase {
  /** Space-separated role names (`pass`, `fail`, `axis`, `grid`…), never inline styles. */
  readonly class?: string;
  /** Stable identity of the node across re-renders (for hover, selection, keyed updates). */
  readonly key?: string;
  /** What the node shows, in words: its tooltip and accessible name. */
  readonly tip?: string;
  readonly fill?: string;
  readonly stroke?: string;
  readonly strokeWidth?: number;
  /** e.g. "4 3" */
  readonly strokeDasharray?: string;
  readonly opacity?: number;
}

/** A group, translated by (x, y). */
export interface GroupNode extends NodeBase {
  readonly type: "g";
  readonly x?: number;
  readonly y?: number;
  readonly children: readonly SceneNode[];
}

export interface RectNode extends NodeBase {
  readonly type: "rect";
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly rx?: number;
}

export interface LineNode extends NodeBase {
  readonly type: "line";
  readonly x1: number;
  readonly y1: number;
  readonly x2: number;
  readonly y2: number;
}

export interface CircleNode extends NodeBase {
  readonly type: "circle";
  readonly cx: number;
  readonly cy: number;
  readonly r: number;
}

/** A path; `d` comes from d3-shape (`line()`, `area()`, `symbol()`), which writes it without a DOM. */
export interface PathNode extends NodeBase {
  readonly type: "path";
  readonly d: string;
}

export interface TextNode extends NodeBase {
  readonly type: "text";
  readonly x: number;
  readonly y: number;
  /** The text drawn (already fitted: see `fitText`); the full text, when cut, is in `tip`. */
  readonly text: string;
  readonly anchor?: "start" | "middle" | "end";
  readonly baseline?: "auto" | "middle" | "hanging";
  /** Font size in px (default: the theme's). */
  readonly size?: number;
  readonly weight?: "normal" | "bold";
}

export type SceneNode = GroupNode | RectNode | LineNode | CircleNode | PathNode | TextNode;

/** One column of a figure's table. */
export interface TableColumn {
  readonly label: string;
  /** Numbers align right. */
  readonly align?: "left" | "right";
}

/**
 * The figure's data as a table: every figure can be read without seeing it
 * (the page's "show as table", the report's fallback). Cells are formatted text.
 */
export interface SceneTable {
  readonly caption: string;
  readonly columns: readonly TableColumn[];
  readonly rows: readonly (readonly string[])[];
}

/** A whole figure. */
export interface Scene {
  /** Width and height in px; the viewBox is `0 0 width height`, so an export scales with its container. */
  readonly width: number;
  readonly height: number;
  /** The figure's accessible name: what it shows, in one sentence. */
  readonly label: string;
  /** A longer description (the answer the figure gives), when there is one. */
  readonly description?: string;
  readonly children: readonly SceneNode[];
  readonly table: SceneTable;
}

/**
 * Every node of a scene, depth first in drawing order (children after their group).
 *
 * @example [...walk(scene)].filter((n) => n.tip).length // how many nodes have a tooltip
 */
export function* walk(nodes: readonly SceneNode[]): Generator<SceneNode> {
  for (const node of nodes) {
    yield node;
    if (node.type === "g") yield* walk(node.children);
  }
}
