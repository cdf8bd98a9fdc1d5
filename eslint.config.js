import js from "@eslint/js";
import ts from "typescript-eslint";
import svelte from "eslint-plugin-svelte";
import globals from "globals";

/** Library code (src/figures included) runs in a page, a worker, the CLI and the companion alike: no DOM, no Node. */
const LIBRARY = ["src/**/*.ts"];
const PLATFORM_FILES = ["src/ui/**", "src/node/**", "src/**/*.browser.ts", "src/**/*.node.ts", "src/**/*.test.ts"];

const nodeModules = [
  "fs",
  "path",
  "os",
  "child_process",
  "crypto",
  "url",
  "stream",
  "worker_threads",
  "http",
  "https",
  "net",
  "zlib",
  "buffer",
  "process",
  "module",
  "util",
  "events",
  "readline",
];

export default ts.config(
  { ignores: ["dist/", "node_modules/", "tmp/", "models/**/*.py", ".evalrx/", "**/fixtures/**/*.json"] },
  js.configs.recommended,
  ...ts.configs.recommended,
  ...svelte.configs["flat/recommended"],
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    files: ["**/*.svelte", "**/*.svelte.ts"],
    languageOptions: { parserOptions: { parser: ts.parser, extraFileExtensions: [".svelte"] } },
    // Big data lives in `$state.raw` and is replaced whole (STYLE.md): plain Maps and Sets built for a new
    // value, or kept as private bookkeeping that is not state, are the point, not a mistake.
    rules: { "svelte/prefer-svelte-reactivity": "off" },
  },
  {
    files: LIBRARY,
    ignores: PLATFORM_FILES,
    languageOptions: { globals: { ...globals["shared-node-browser"] } },
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^node:",
              message: "Library code runs in the browser too: keep Node APIs in src/node or a *.node.ts file.",
            },
            {
              regex: `^(${nodeModules.join("|")})(/.*)?$`,
              message: "Library code runs in the browser too: keep Node APIs in src/node or a *.node.ts file.",
            },
            {
              regex: "\\.(browser|node)(\\.ts)?$",
              message:
                "Library code must not import platform-specific modules (*.browser.ts / *.node.ts); inject them.",
            },
            {
              regex: "(^|/)(ui|node)/",
              message: "Library code must not import from src/ui or src/node: dependencies point down.",
            },
            {
              regex: "^d3(-(selection|axis|transition|zoom|brush|drag))?$",
              message:
                "These d3 modules need a DOM (and the d3 umbrella pulls them in): library code (src/figures) uses the DOM-free ones (d3-scale, d3-shape, d3-array, d3-format, d3-scale-chromatic) and draws axes from scale.ticks(); DOM behaviour goes in src/ui.",
            },
          ],
        },
      ],
      "no-restricted-globals": [
        "error",
        ...[
          "window",
          "document",
          "navigator",
          "indexedDB",
          "localStorage",
          "sessionStorage",
          "location",
          "self",
          "Worker",
          "HTMLElement",
          "OffscreenCanvas",
          "createImageBitmap",
        ].map((name) => ({
          name,
          message: `'${name}' is a browser global: library code must run in Node too. Put it in src/ui, workers/ or a *.browser.ts file.`,
        })),
        ...["process", "Buffer", "__dirname", "__filename", "require", "global", "setImmediate"].map((name) => ({
          name,
          message: `'${name}' is a Node global: library code must run in the browser too. Put it in src/node or a *.node.ts file.`,
        })),
      ],
    },
  },
);
