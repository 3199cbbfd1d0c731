import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import {
  EPISODE_TOOL_SCHEMAS,
  PolicyReady,
  PolicyTurnAnswer,
  callFromLocalAnswer,
  localPolicyHash,
  localPolicyName,
  localTurnSeed,
  teacherMessages,
  type LocalPolicySpec,
  type TrainerResultEvent,
} from "@agentlab/core";
import { runPython, TrainerRunError, type RunPythonOptions } from "../trainer/python";
import { EpisodeInfraError } from "./deps";
import type { EpisodePolicy } from "./policies";

// A local model as an episode's policy: the trainer's `episode-policy` command keeps the model
// loaded for the whole job (main episode and continuations) and answers one turn per request on
// a Unix socket this side serves (as grpo's reward socket, the other way round). Each turn sends
// the transcript as the teacher's chat messages (core teacherMessages, a pure function of the
// transcript) with a seed drawn from the run's seed and the step index; the trainer renders them
// with the model's tool-call template and parses the call, which the environment then executes or
// refuses like any policy's.

export type LocalPolicyHandle = {
  policy: EpisodePolicy;
  ready: PolicyReady;
  /** Ends the trainer (the socket closing is its signal) and waits for its result. */
  close(): Promise<TrainerResultEvent | null>;
};

/** A trainer failure as the episode job's reason: a bad spec or model is the user's, anything else infra. */
function asEpisodeError(e: unknown): EpisodeInfraError {
  if (e instanceof EpisodeInfraError) return e;
  if (e instanceof TrainerRunError)
    return new EpisodeInfraError(
      `local policy: ${e.message}`,
      e.reason === "user_error" ? "user_error" : "infra_error",
    );
  return new EpisodeInfraError(`local policy: ${e instanceof Error ? e.message : String(e)}`, "infra_error");
}

export async function startLocalPolicy(
  spec: LocalPolicySpec,
  opts: { python: RunPythonOptions; adapter?: string; torchThreads?: number },
): Promise<LocalPolicyHandle> {
  // A Unix socket path is limited to ~107 bytes: a short folder of its own, not the work dir.
  const sockDir = await mkdtemp(join(tmpdir(), "policy-"));
  const path = join(sockDir, "policy.sock");
  const link: { sock: Socket | null } = { sock: null };
  const lines: string[] = [];
  const waiters: ((line: string | null) => void)[] = [];
  let closed = false;
  const deliver = (line: string | null) => {
    const w = waiters.shift();
    if (w) w(line);
    else if (line !== null) lines.push(line);
  };
  const server: Server = createServer((sock) => {
    if (link.sock) return void sock.destroy(); // one trainer per job
    link.sock = sock;
    sock.on("error", () => sock.destroy());
    createInterface({ input: sock }).on("line", deliver);
    sock.on("close", () => {
      closed = true;
      while (waiters.length > 0) deliver(null);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  const trainer = runPython(
    "episode-policy",
    {
      base_model: spec.baseModel,
      revision: spec.revision ?? null,
      adapter: opts.adapter,
      expected_adapter_sha256: spec.adapterSha256 ?? null,
      policy_socket: path,
      tools: EPISODE_TOOL_SCHEMAS.map((t) => ({ ...t })),
      chat_template: spec.chatTemplate,
      max_new_tokens: spec.decoding.maxNewTokens,
      do_sample: spec.decoding.doSample,
      temperature: spec.decoding.temperature,
      top_p: spec.decoding.topP,
      device: spec.device,
      local_files_only: spec.localFilesOnly,
      ...(opts.torchThreads ? { torch_threads: opts.torchThreads } : {}),
    },
    opts.python,
  );
  // Its end, whenever it comes: a trainer that dies mid-episode fails the turn waiting on it.
  let ended: unknown = null;
  const done = trainer.then(
    (r) => r,
    (e: unknown) => {
      ended = e;
      closed = true;
      while (waiters.length > 0) deliver(null);
      return null;
    },
  );
  const nextLine = (): Promise<string | null> => {
    const line = lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (closed) return Promise.resolve(null);
    return new Promise((resolve) => waiters.push(resolve));
  };
  const gone = (what: string) =>
    ended ? asEpisodeError(ended) : new EpisodeInfraError(`local policy: the trainer left ${what}`, "infra_error");
  const cleanup = async () => {
    link.sock?.end();
    const result = await done;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(sockDir, { recursive: true, force: true });
    return result;
  };

  let ready: PolicyReady;
  try {
    const first = await Promise.race([nextLine(), done.then(() => null)]);
    if (first === null) throw gone("before it was ready");
    ready = PolicyReady.parse(JSON.parse(first));
  } catch (e) {
    await cleanup();
    throw asEpisodeError(e);
  }

  let nextId = 0;
  const policy: EpisodePolicy = {
    name: localPolicyName(spec),
    hash: localPolicyHash(spec, ready),
    async next(view) {
      const id = nextId++;
      const t = view.transcript.length;
      const request = {
        id,
        messages: teacherMessages(view.firstObservation, view.transcript),
        seed: spec.decoding.doSample ? localTurnSeed(view.seed, t) : null,
      };
      if (!link.sock || closed) throw gone("during the episode");
      link.sock.write(`${JSON.stringify(request)}\n`);
      const line = await nextLine();
      if (line === null) throw gone("during a turn");
      const answer = PolicyTurnAnswer.parse(JSON.parse(line));
      if (answer.id !== id)
        throw new EpisodeInfraError(`local policy: answer ${answer.id} for turn ${id}`, "infra_error");
      // The transcript outgrew the model: no turn can be asked of it, and no retry changes that.
      if ("error" in answer) throw new EpisodeInfraError(`local policy: ${answer.error.message}`, "user_error");
      return callFromLocalAnswer(answer);
    },
  };
  return { policy, ready, close: cleanup };
}
