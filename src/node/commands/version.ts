import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** The code version for a report's provenance: the package version and, in a git checkout, the commit. */
export function codeVersion(): string {
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
