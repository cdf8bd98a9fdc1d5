import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * The code version for a report's provenance and a run's fingerprint: the package version and, in a git
 * checkout, the commit; `EVALRX_CODE_VERSION` sets it outright (a CI build id, or a test that commits mid-run).
 */
export function codeVersion(): string {
  const pinned = process.env["EVALRX_CODE_VERSION"];
  if (pinned) return pinned;
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: new URL("../../..", import.meta.url),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return `${pkg.version}+${commit}`;
  } catch {
    return pkg.version;
  }
}
