#!/usr/bin/env node
// The `evalrx` command: loads the TypeScript CLI through tsx, so the CLI runs the same sources the app and tests use.
import { register } from "tsx/esm/api";

register();
const { main } = await import("./cli.ts");
process.exitCode = await main(process.argv.slice(2));
