import { readFileSync } from "node:fs";
import { safeConsole } from "./terminal.ts";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

/** One `evalrx` sub-command: its one-line help and what it does. Each returns the process exit code. */
export interface Command {
  readonly summary: string;
  readonly usage: string;
  run(args: string[]): Promise<number>;
}

/**
 * Sub-commands by name; each lives in `./commands/<name>.ts` and exports `command`.
 * Loaded on demand so `evalrx --version` does not load the model runtime.
 */
const COMMANDS: Record<string, () => Promise<{ command: Command }>> = {
  explore: () => import("./commands/explore.ts"),
  investigate: () => import("./commands/investigate.ts"),
  eval: () => import("./commands/eval.ts"),
  gate: () => import("./commands/gate.ts"),
  compare: () => import("./commands/compare.ts"),
  calibrate: () => import("./commands/calibrate.ts"),
  power: () => import("./commands/power.ts"),
  data: () => import("./commands/data.ts"),
  model: () => import("./commands/model.ts"),
  share: () => import("./commands/share.ts"),
  companion: () => import("./commands/companion.ts"),
  worker: () => import("./commands/worker.ts"),
};

async function loadCommand(name: string): Promise<Command | undefined> {
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  return load ? (await load()).command : undefined;
}

async function help(): Promise<string> {
  const names = Object.keys(COMMANDS);
  const loaded = await Promise.all(names.map(loadCommand));
  const rows = names.map((name, i) => `  ${name.padEnd(12)} ${loaded[i]!.summary}`);
  return [
    `evalrx ${pkg.version} — diagnose why a small open model fails, and whether the fix worked`,
    "",
    "Usage: evalrx <command> [options]",
    "",
    "Commands:",
    ...(rows.length ? rows : ["  (none yet)"]),
    "",
    "Options:",
    "  --help, -h     show this help (or a command's: evalrx <command> --help)",
    "  --version, -v  print the version",
    "",
    "Exit codes: 0 ok, 1 a check failed, 2 inconclusive under --strict, 3 error (bad input, unreadable file).",
  ].join("\n");
}

/** Runs the CLI on `argv` (without `node` and the script) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  // Names and ids from imported files reach the terminal as text, never as escape sequences.
  const restore = safeConsole();
  try {
    return await dispatch(argv);
  } finally {
    restore();
  }
}

async function dispatch(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    console.log(await help());
    return 0;
  }
  if (first === "--version" || first === "-v") {
    console.log(pkg.version);
    return 0;
  }
  const command = await loadCommand(first);
  if (!command) {
    const known = Object.keys(COMMANDS).map((name) => `'${name}'`);
    console.error(`evalrx: unknown command '${first}'; commands are [${known.join(", ")}]. See evalrx --help.`);
    return 3;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(`${command.usage}\n\n${command.summary}`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    console.error(`evalrx ${first}: ${error instanceof Error ? error.message : String(error)}`);
    return 3;
  }
}
