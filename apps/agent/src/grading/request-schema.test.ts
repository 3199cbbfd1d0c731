import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RunnerRequest } from "@agentlab/core";
import { GRADER_REQUEST_SCHEMA_PATH, graderRequestJsonSchema } from "./request-schema";

const root = resolve(fileURLToPath(import.meta.url), "..", "..", "..", "..", "..");

describe("grader request schema", () => {
  it("the checked-in schema is the one generated from core's RunnerRequest (else: npm run gen:schemas)", () => {
    const checkedIn = readFileSync(join(root, GRADER_REQUEST_SCHEMA_PATH), "utf8");
    expect(checkedIn, "stale: run `npm run gen:schemas`").toBe(graderRequestJsonSchema());
  });

  it("a changed zod schema gives a different file (the staleness check can fail)", () => {
    const changed = RunnerRequest.extend({ priority: z.number().int() });
    expect(graderRequestJsonSchema(changed)).not.toBe(graderRequestJsonSchema());
    expect(graderRequestJsonSchema(changed)).toContain('"priority"');
  });

  it("refuses unknown keys at every object level it generates", () => {
    const json = JSON.parse(graderRequestJsonSchema()) as {
      additionalProperties?: boolean;
      properties: { limits: { additionalProperties?: boolean } };
    };
    expect(json.additionalProperties).toBe(false);
    expect(json.properties.limits.additionalProperties).toBe(false);
  });
});
