/**
 * Dataset ids for imports: one from the file's name, a free one when that id
 * is taken (a dataset is never silently replaced), and what is wrong with one
 * the user typed.
 */

/**
 * The id a dataset gets from its file: the name without folders or extension.
 *
 * @example datasetIdFromFile("pope/pope.jsonl") // "pope"
 * @example datasetIdFromFile("logs/2024-05-01T10-00-00_arc.eval") // "2024-05-01T10-00-00_arc"
 */
export function datasetIdFromFile(path: string): string {
  const name = path.split(/[\\/]/).pop() ?? path;
  const stem = name.replace(/\.(jsonl|ndjson|json|csv|tsv|txt|parquet|eval)$/i, "");
  const id = stem.trim().replace(/\s+/g, "-");
  return id === "" ? "dataset" : id;
}

/**
 * The first of `base`, `base-2`, `base-3`, … that no stored dataset has.
 *
 * @example freeDatasetId("pope", ["pope", "pope-2"]) // "pope-3"
 */
export function freeDatasetId(base: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  if (!used.has(base)) return base;
  const stem = base.replace(/-\d+$/, "");
  for (let k = 2; ; k++) if (!used.has(`${stem}-${k}`)) return `${stem}-${k}`;
}

/** The longest id accepted (ids appear in URLs and run names). */
export const MAX_DATASET_ID = 100;

/**
 * What is wrong with this dataset id, or undefined when it is fine.
 *
 * @example datasetIdProblem(" pope") // "the name starts or ends with a space"
 */
export function datasetIdProblem(id: string): string | undefined {
  if (id === "") return "give the dataset a name";
  if (id.trim() !== id) return "the name starts or ends with a space";
  if (id.length > MAX_DATASET_ID) return `the name is ${id.length} characters; keep it to ${MAX_DATASET_ID}`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(id)) return "the name holds a control character (a tab or a line break)";
  return undefined;
}

/** File name endings read as datasets or eval logs; everything else dropped beside them is a candidate image. */
const DATA_FILE = /\.(jsonl|ndjson|json|csv|tsv|parquet|eval)$/i;
const IMAGE_FILE = /\.(png|jpe?g|gif|webp|bmp)$/i;

/**
 * Which of the dropped files are datasets, which are images, and which are
 * neither (a README, a config), by their names.
 *
 * @example sortDropped([{ path: "pope/pope.jsonl" }, { path: "pope/images/a.png" }]) // { data: [0], images: [1], other: [] }
 */
export function sortDropped(files: readonly { readonly path: string }[]): {
  data: number[];
  images: number[];
  other: number[];
} {
  const data: number[] = [];
  const images: number[] = [];
  const other: number[] = [];
  files.forEach((f, i) => {
    const name = f.path.split("/").pop() ?? f.path;
    if (name.startsWith(".")) other.push(i);
    else if (DATA_FILE.test(name)) data.push(i);
    else if (IMAGE_FILE.test(name)) images.push(i);
    else other.push(i);
  });
  // The file nearest the top of a dropped folder first (pope/pope.jsonl before pope/extra/old.jsonl).
  data.sort((a, b) => depth(files[a]!.path) - depth(files[b]!.path) || (files[a]!.path < files[b]!.path ? -1 : 1));
  return { data, images, other };
}

function depth(path: string): number {
  return path.split("/").length;
}
