import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TrainSpec } from "@agentlab/core";
import { TRAINER_SCHEMA_DIR, TRAINER_SPEC_SCHEMAS, trainerJsonSchemas } from "./json-schemas";

const dir = join(resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", ".."), TRAINER_SCHEMA_DIR);
const STALE =
  "the trainer's checked-in JSON Schemas are stale: run `npm run gen:schemas` and commit apps/agent/python/src/agentlab_trainer/schemas/";

describe("the trainer's JSON Schemas", () => {
  it("are checked in exactly as the zod schemas generate them", () => {
    const generated = trainerJsonSchemas();
    expect(
      readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .sort(),
      STALE,
    ).toEqual(Object.keys(generated).sort());
    for (const [name, text] of Object.entries(generated))
      expect(readFileSync(join(dir, name), "utf8"), `${name}: ${STALE}`).toBe(text);
  });

  it("would be found stale after a zod change (the check can fail)", () => {
    const changed = trainerJsonSchemas({
      ...TRAINER_SPEC_SCHEMAS,
      train: TrainSpec.extend({ new_knob: z.number().default(1) }),
    });
    expect(changed["train.json"]).not.toBe(readFileSync(join(dir, "train.json"), "utf8"));
    expect(changed["generate.json"]).toBe(readFileSync(join(dir, "generate.json"), "utf8"));
  });

  it("refuse unknown keys at every level of a spec", () => {
    const Strict = z.object({ additionalProperties: z.boolean().optional() });
    const train = Strict.extend({ properties: z.record(z.string(), Strict) }).parse(
      JSON.parse(trainerJsonSchemas()["train.json"] ?? "{}"),
    );
    expect(train.additionalProperties).toBe(false);
    expect(train.properties.lora?.additionalProperties).toBe(false);
  });
});
