#!/usr/bin/env node
// The `agentlab` CLI: TypeScript bundled once by esbuild and cached (cli-bundle.mjs), so a command
// starts in a fraction of a second and still needs no build step.
import { loadMain } from "./cli-bundle.mjs";

const { main, how } = await loadMain();
if (process.env.AGENTLAB_CLI_TRACE) process.stderr.write(`cli: ${how}\n`);
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`agentlab: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
