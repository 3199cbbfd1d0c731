import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { join } from "node:path";

// Correct programs with tests, from the two datasets the built-in pool is made of. Public tests
// are the problem's visible examples (docstring `>>>` examples, else the first asserts); hidden
// tests are the full test set.

export type Program = {
  group: string;
  idBase: string;
  origin: "humaneval" | "mbpp" | "synthetic";
  license: string;
  instruction: string;
  source: string;
  publicTests: string;
  hiddenTests: string;
  /** Read-only files the program imports (the learnable family's per-group constants). */
  dependencies?: { path: string; content: string }[];
  /** The unit of dependence its tasks declare (TaskSpec.cluster), when groups share answers. */
  cluster?: string;
};

const header = "from solution import *  # noqa: F401,F403\n\n";

function asTests(prefix: string, asserts: string[], name: string): string {
  return header + prefix + asserts.map((a, i) => `\n\ndef test_${name}_${i + 1}():\n    ${a}\n`).join("");
}

/** `>>> f(1)` followed by one output line becomes `assert f(1) == <output>`. */
export function docstringExamples(prompt: string, entry: string): string[] {
  const lines = prompt.split("\n").map((l) => l.trim());
  const out: string[] = [];
  for (let i = 0; i + 1 < lines.length; i++) {
    const l = lines[i] ?? "";
    const next = lines[i + 1] ?? "";
    if (
      !l.startsWith(">>> ") ||
      !l.slice(4).startsWith(`${entry}(`) ||
      !next ||
      next.startsWith(">>>") ||
      next.startsWith('"""')
    )
      continue;
    out.push(`assert ${l.slice(4)} == ${next}`);
  }
  return out;
}

export function humanEval(datasetsDir: string): Program[] {
  const text = gunzipSync(readFileSync(join(datasetsDir, "humaneval", "HumanEval.jsonl.gz"))).toString("utf8");
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const row = JSON.parse(line) as {
        task_id: string;
        prompt: string;
        entry_point: string;
        canonical_solution: string;
        test: string;
      };
      const n = row.task_id.split("/")[1] ?? "0";
      const firstAsserts = row.test
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l.startsWith("assert candidate("))
        .slice(0, 2)
        .map((l) => l.replace(/candidate\(/g, `${row.entry_point}(`));
      const examples = docstringExamples(row.prompt, row.entry_point);
      return {
        group: `humaneval/${n}`,
        idBase: `humaneval-${n}`,
        origin: "humaneval" as const,
        license: "MIT",
        instruction: `The function \`${row.entry_point}\` in solution.py fails some tests. Fix the bug.`,
        source: row.prompt + row.canonical_solution,
        publicTests: asTests("", examples.length > 0 ? examples : firstAsserts, "example"),
        hiddenTests: `${header}${row.test}\n\ndef test_check():\n    check(${row.entry_point})\n`,
      };
    });
}

export function mbpp(datasetsDir: string, limit: number): Program[] {
  const rows = readFileSync(join(datasetsDir, "mbpp", "mbpp.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .slice(0, limit);
  return rows.map((line) => {
    const row = JSON.parse(line) as {
      task_id: number;
      text: string;
      code: string;
      test_list: string[];
      test_setup_code: string;
      challenge_test_list: string[];
    };
    const setup = row.test_setup_code.replace(/\r\n/g, "\n").trim();
    const prefix = setup ? `${setup}\n` : "";
    const all = [...row.test_list, ...row.challenge_test_list].map((a) => a.trim());
    return {
      group: `mbpp/${row.task_id}`,
      idBase: `mbpp-${row.task_id}`,
      origin: "mbpp" as const,
      license: "CC-BY-4.0",
      instruction: `${row.text.trim()} The implementation in solution.py fails some tests. Fix the bug.`,
      source: row.code.replace(/\r\n/g, "\n"),
      publicTests: asTests(prefix, all.slice(0, 1), "example"),
      hiddenTests: asTests(prefix, all, "case"),
    };
  });
}
