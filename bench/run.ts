// `npm run bench -- NAME`: runs bench/NAME.ts, which prints its figures as one JSON line at the end.
import { existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const name = process.argv[2];
const dir = fileURLToPath(new URL(".", import.meta.url));
const available = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts")
  .map((f) => f.replace(/\.ts$/, ""));
if (!name || !existsSync(`${dir}/${name}.ts`)) {
  console.error(`usage: npm run bench -- NAME   (one of: ${available.join(", ")})`);
  process.exit(2);
}
await import(`./${name}.ts`);
