#!/usr/bin/env node
// The `agentlab` CLI: TypeScript run through tsx's loader, so the CLI needs no build step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../cli/main.ts");
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`agentlab: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
