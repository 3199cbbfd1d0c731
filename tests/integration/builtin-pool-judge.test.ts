import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TaskSpec } from "@agentlab/core";
import { Grader } from "../../apps/agent/src/grading/grader";
import { sandboxCfg } from "./helpers/judge";

// The whole built-in pool in the isolated judge: every reference passes and every
// buggy main file fails, with no in-process fallback. Two sandboxes grade in parallel.

const tasks = gunzipSync(readFileSync(join(process.cwd(), "data/builtin-pool.jsonl.gz")))
  .toString("utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => TaskSpec.parse(JSON.parse(l)));
let grader: Grader;
beforeAll(() => {
  grader = new Grader(sandboxCfg(), { workers: 2 });
});
afterAll(() => grader.close());

describe("the built-in pool in the isolated judge", () => {
  it(`grades all ${tasks.length} references as pass and all buggy files as failing`, {
    timeout: 1_800_000,
  }, async () => {
    const wrong: string[] = [];
    let next = 0;
    await Promise.all(
      [0, 1].map(async () => {
        for (let t = tasks[next++]; t; t = tasks[next++]) {
          const ref = await grader.referenceIds(t);
          if (ref.result.verdict !== "pass" || ref.result.isolation !== "judge") {
            wrong.push(`${t.id}: reference ${ref.result.verdict} (${ref.result.reasons.slice(0, 2).join("; ")})`);
            continue;
          }
          const buggy = await grader.grade(
            t,
            t.files.filter((f) => f.role === "main"),
            { expectedIds: ref.ids },
          );
          if (!["fail_syntax", "fail_public", "fail_hidden", "timeout"].includes(buggy.verdict))
            wrong.push(`${t.id}: buggy ${buggy.verdict} (${buggy.reasons.slice(0, 2).join("; ")})`);
        }
      }),
    );
    expect(tasks.length).toBeGreaterThan(800);
    expect(wrong).toEqual([]);
  });
});
