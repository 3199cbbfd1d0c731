import { spawn } from "node:child_process";
import { MutateAnswer, type Mutant } from "@agentlab/core";
import { join } from "node:path";
import type { SandboxConfig } from "../sandbox/types";
import { runGraderHelper } from "./helper-run";

// Client of apps/agent/grader/mutate.py. Task files may be hostile (an uploaded pool), so the
// audit parses them inside the sandbox; the synthesizer's inputs are our own datasets and it runs
// the same script directly, which is much faster for thousands of programs.

export type { Mutant };
export type MutationSet = { normalized: string; mutants: Mutant[] };

const parse = (stdout: string): MutationSet => {
  let raw: unknown;
  try {
    raw = JSON.parse(stdout);
  } catch {
    throw new Error(`mutation failed: unreadable output ${stdout.slice(0, 200)}`);
  }
  const answer = MutateAnswer.safeParse(raw);
  if (!answer.success)
    throw new Error(`mutation failed: answer does not match its schema: ${answer.error.message.slice(0, 500)}`);
  const out = answer.data;
  if (out.error || out.normalized === undefined || !out.mutants)
    throw new Error(`mutation failed: ${out.error ?? "no output"}`);
  return { normalized: out.normalized, mutants: out.mutants };
};

export async function mutantsSandboxed(cfg: SandboxConfig, source: string, max: number): Promise<MutationSet> {
  const stdout = await runGraderHelper(cfg, "mutate.py", JSON.stringify({ source, max }), {
    what: "mutation generator",
    wallTimeoutS: 30,
    maxOutputBytes: 32 << 20,
  });
  return parse(stdout);
}

export function mutantsDirect(graderDir: string, source: string, max: number): Promise<MutationSet> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(graderDir, ".venv/bin/python"), ["-I", join(graderDir, "mutate.py")], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0)
        return reject(new Error(`mutate.py exited ${String(code)}: ${Buffer.concat(err).toString().slice(-500)}`));
      try {
        resolve(parse(Buffer.concat(out).toString("utf8")));
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
    child.stdin.end(JSON.stringify({ source, max }));
  });
}
