// Glue between the agent and the Python trainer (apps/agent/python, package agentlab_trainer).
// A command runs as `python -m agentlab_trainer <kind> --spec FILE` in its own process group; every
// stdout line is parsed with the core TrainerEvent schema; cancel = SIGTERM to the group, grace,
// SIGKILL (brief §4).
import { spawn, execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { guardGroup, killGroup } from "../runner/group";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  TRAINER_EXIT,
  TrainerDoctor,
  TrainerEvent,
  type TrainerCommand,
  type TrainerResultEvent,
  type TrainerSpecs,
} from "@agentlab/core";
import { TRAINER_SPEC_SCHEMAS } from "./json-schemas";

export type TrainerLog = (stream: "stdout" | "stderr", line: string) => void;

export type RunPythonOptions = {
  /** Interpreter path (see findPython). */
  python: string;
  onEvent?: (event: TrainerEvent) => void;
  signal?: AbortSignal;
  log?: TrainerLog;
  /** Working directory of the child (default: the current one). */
  cwd?: string;
  /** Full environment of the child; inherited when absent. */
  env?: NodeJS.ProcessEnv;
  /** Milliseconds between SIGTERM and SIGKILL on abort (default 10 s). */
  graceMs?: number;
  /** Where the spec file is written (default: the OS temp dir). */
  tmpDir?: string;
};

export type TrainerFailureReason = "user_error" | "canceled" | "internal_error";

export class TrainerRunError extends Error {
  readonly reason: TrainerFailureReason;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly result: TrainerResultEvent | undefined;
  readonly stderrTail: string;

  constructor(
    message: string,
    fields: {
      reason: TrainerFailureReason;
      exitCode: number | null;
      signal: NodeJS.Signals | null;
      result?: TrainerResultEvent;
      stderrTail: string;
    },
  ) {
    super(message);
    this.name = "TrainerRunError";
    this.reason = fields.reason;
    this.exitCode = fields.exitCode;
    this.signal = fields.signal;
    this.result = fields.result;
    this.stderrTail = fields.stderrTail;
  }
}

const STDERR_TAIL_LINES = 40;

/** Run one trainer command; resolves with its `result` event when it succeeded, throws otherwise. */
export async function runPython<K extends TrainerCommand>(
  kind: K,
  spec: TrainerSpecs[K],
  opts: RunPythonOptions,
): Promise<TrainerResultEvent> {
  if (opts.signal?.aborted) {
    throw new TrainerRunError(`trainer ${kind} canceled before start`, {
      reason: "canceled",
      exitCode: null,
      signal: null,
      stderrTail: "",
    });
  }
  // Parsed before it is written: a key the trainer does not know is refused on this side already
  // (the trainer checks the same contract as JSON Schema), and the file carries every default.
  const checked = TRAINER_SPEC_SCHEMAS[kind].safeParse(spec);
  if (!checked.success) {
    throw new TrainerRunError(`invalid ${kind} spec: ${z.prettifyError(checked.error)}`, {
      reason: "user_error",
      exitCode: null,
      signal: null,
      stderrTail: "",
    });
  }
  const dir = await mkdtemp(join(opts.tmpDir ?? tmpdir(), "agentlab-trainer-"));
  const specFile = join(dir, "spec.json");
  await writeFile(specFile, JSON.stringify(checked.data), { mode: 0o600 });
  const log: TrainerLog = opts.log ?? (() => {});
  try {
    return await new Promise<TrainerResultEvent>((resolvePromise, reject) => {
      const child = spawn(opts.python, ["-m", "agentlab_trainer", kind, "--spec", specFile], {
        cwd: opts.cwd,
        env: opts.env,
        detached: true, // own process group: cancel reaches every descendant
        stdio: ["ignore", "pipe", "pipe"],
      });
      let result: TrainerResultEvent | undefined;
      let schemaError: string | undefined;
      const stderrTail: string[] = [];

      const guard = guardGroup(child, opts.signal, opts.graceMs ?? 10_000);

      const stdoutLines = createInterface({ input: child.stdout });
      stdoutLines.on("line", (line) => {
        if (!line.trim()) return;
        let raw: unknown;
        try {
          raw = JSON.parse(line);
        } catch {
          log("stdout", line);
          return;
        }
        const parsed = TrainerEvent.safeParse(raw);
        if (!parsed.success) {
          schemaError = `event does not match the trainer schema: ${parsed.error.message.slice(0, 500)}`;
          log("stdout", `[unparsed event] ${line.slice(0, 2000)}`);
          return;
        }
        if (parsed.data.event === "result") result = parsed.data;
        if (parsed.data.event === "log") log("stdout", parsed.data.message);
        opts.onEvent?.(parsed.data);
      });
      const stderrLines = createInterface({ input: child.stderr });
      stderrLines.on("line", (line) => {
        stderrTail.push(line);
        if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
        log("stderr", line);
      });

      const stdoutClosed = new Promise<void>((r) => stdoutLines.once("close", () => r()));
      const stderrClosed = new Promise<void>((r) => stderrLines.once("close", () => r()));
      child.once("error", (err) => {
        guard.dispose();
        reject(
          new TrainerRunError(`cannot start ${opts.python}: ${err.message}`, {
            reason: "internal_error",
            exitCode: null,
            signal: null,
            stderrTail: "",
          }),
        );
      });
      child.once("exit", (code, sig) => {
        // The trainer is gone: what is left of its group (torchrun and its ranks after the
        // launcher was killed, say) is orphaned and would hold the pipes open: nothing outlives it.
        killGroup(child, "SIGKILL");
        void Promise.all([stdoutClosed, stderrClosed]).then(() => {
          guard.dispose();
          const tail = stderrTail.join("\n");
          if (code === TRAINER_EXIT.ok && result?.status === "succeeded") {
            resolvePromise(result);
            return;
          }
          const reason: TrainerFailureReason =
            guard.aborted() || code === TRAINER_EXIT.canceled || result?.status === "canceled"
              ? "canceled"
              : code === TRAINER_EXIT.userError || result?.error?.kind === "user_error"
                ? "user_error"
                : "internal_error";
          const why =
            result?.error?.message ?? schemaError ?? (tail.split("\n").slice(-5).join("\n") || "no result event");
          reject(
            new TrainerRunError(
              `trainer ${kind} ${reason === "canceled" ? "canceled" : "failed"} (exit ${code ?? sig}): ${why}`,
              { reason, exitCode: code, signal: sig, result, stderrTail: tail },
            ),
          );
        });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The agent's python: the configured path if given, else apps/agent/python/.venv/bin/python. */
export function findPython(configured?: string | null, opts: { root?: string } = {}): string {
  if (configured) return configured;
  const root = opts.root ?? resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
  const venv = join(root, "python", ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

/**
 * The vLLM backend's own interpreter (vLLM lives in its own venv, its torch and
 * transformers pins conflict with the trainer's): the configured path, else
 * apps/agent/python/vllm/.venv/bin/python; null when neither exists.
 */
export function findVllmPython(configured?: string | null, opts: { root?: string } = {}): string | null {
  const root = opts.root ?? resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
  const path = configured || join(root, "python", "vllm", ".venv", "bin", "python");
  return existsSync(path) ? path : null;
}

/** What DOCTOR_SNIPPET prints, read with core TrainerDoctor (a missing key reads as not installed). */
export type PythonDoctor = TrainerDoctor & { error?: string };

const DOCTOR_SNIPPET = `
import json, platform
from importlib.metadata import version, PackageNotFoundError
def v(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return None
out = {"python": platform.python_version(), "torch": None, "cuda": None, "cudaAvailable": False}
for key, dist in [("transformers", "transformers"), ("peft", "peft"), ("trl", "trl"), ("bitsandbytes", "bitsandbytes"), ("vllm", "vllm"), ("agentlabTrainer", "agentlab_trainer")]:
    out[key] = v(dist)
try:
    import torch
    out["torch"] = torch.__version__
    out["cuda"] = torch.version.cuda
    out["cudaAvailable"] = bool(torch.cuda.is_available())
except Exception:
    pass
print(json.dumps(out))
`;

const EMPTY_DOCTOR: PythonDoctor = {
  python: null,
  torch: null,
  cuda: null,
  cudaAvailable: false,
  transformers: null,
  peft: null,
  trl: null,
  bitsandbytes: null,
  vllm: null,
  agentlabTrainer: null,
};

/** Versions of python and the ML stack in the given interpreter; nulls for what is missing. */
export function pythonDoctor(python: string, opts: { timeoutMs?: number } = {}): Promise<PythonDoctor> {
  return new Promise((resolvePromise) => {
    execFile(python, ["-c", DOCTOR_SNIPPET], { timeout: opts.timeoutMs ?? 120_000 }, (err, stdout, stderr) => {
      if (err) {
        resolvePromise({ ...EMPTY_DOCTOR, error: `${err.message}${stderr ? `: ${stderr.slice(-500)}` : ""}` });
        return;
      }
      try {
        const parsed = TrainerDoctor.safeParse(JSON.parse(stdout.trim().split("\n").pop() ?? "{}"));
        resolvePromise(
          parsed.success
            ? parsed.data
            : {
                ...EMPTY_DOCTOR,
                error: `doctor output does not match its schema: ${parsed.error.message.slice(0, 300)}`,
              },
        );
      } catch (e) {
        resolvePromise({ ...EMPTY_DOCTOR, error: `unreadable doctor output: ${(e as Error).message}` });
      }
    });
  });
}
