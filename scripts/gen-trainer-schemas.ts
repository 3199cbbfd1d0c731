// `npm run gen:schemas`: writes the trainer's spec schemas and the grader's request schema (JSON Schema from the zod schemas in
// core) to apps/agent/python/src/agentlab_trainer/schemas/. A unit test fails while they are stale.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { TRAINER_SCHEMA_DIR, trainerJsonSchemas } from "../apps/agent/src/trainer/json-schemas";
import { GRADER_REQUEST_SCHEMA_PATH, graderRequestJsonSchema } from "../apps/agent/src/grading/request-schema";

const root = resolve(fileURLToPath(import.meta.url), "..", "..");
const dir = join(root, TRAINER_SCHEMA_DIR);
mkdirSync(dir, { recursive: true });
for (const [name, text] of Object.entries(trainerJsonSchemas())) {
  writeFileSync(join(dir, name), text);
  console.log(`wrote ${join(TRAINER_SCHEMA_DIR, name)}`);
}
// The grader's request schema (the grader refuses unknown keys with it).
writeFileSync(join(root, GRADER_REQUEST_SCHEMA_PATH), graderRequestJsonSchema());
console.log(`wrote ${GRADER_REQUEST_SCHEMA_PATH}`);
