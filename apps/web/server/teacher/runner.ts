import {
  DomainError,
  PROMPT_TEMPLATE_HASH,
  budgetReached,
  callCost,
  candidateCacheKey,
  formatAnswer,
  mainPaths,
  parseAnswer,
  renderRepairPrompt,
  sampleSeed,
  scrubbedMessage,
  type Usage,
  type ChatMessage,
} from "@agentlab/core";
import {
  bumpCollection,
  collectableTasks,
  collectionItemKeys,
  findCandidate,
  getCollection,
  getPrice,
  getProvider,
  providerSealedKey,
  recordFreshCandidate,
  recordReusedCandidate,
  updateActiveCollection,
  type CollectionRow,
  type TaskRowForCollect,
} from "@agentlab/db";
import type { Services } from "../services";
import type OpenAI from "openai";
import { chatCompletion, DEFAULT_RETRY, ProviderCallError, providerClient, type RetryPolicy } from "./client";
import { enqueueCollectionGrading } from "./grading";

// Runs a collection on the server: every (task, sample) of the split's train/dev tasks is either
// taken from the candidate cache or asked of the provider, under a concurrency limit and a budget.
// Everything a run has done is in the database (the collection's items, candidates, ledger and
// counters), so a run started again (collection-runs.ts: by the leader, after a restart or a
// change of leader) asks only for the items not stored yet.

export type RunnerOptions = { retry?: RetryPolicy };

/** Why a run was aborted: a user's cancel (recorded by whoever canceled), or this instance stopping its loops (the next leader resumes it). */
export type RunStop = "canceled" | "shutdown";

type Item = { task: TaskRowForCollect; sampleIndex: number };

/** One run of a collection until it is done, fails or `signal` aborts it; resumes where its stored items end. */
export async function runCollection(
  services: Services,
  id: string,
  signal: AbortSignal,
  opts: RunnerOptions,
): Promise<void> {
  const { db } = services;
  const log = services.log.child({ collectionId: id });
  const col = await getCollection(db, id);
  if (!col) throw new DomainError("NOT_FOUND", "no such collection");
  if (col.state !== "queued" && col.state !== "running") return;
  const provider = await getProvider(db, col.providerId);
  if (!provider) throw new DomainError("NOT_FOUND", "the collection's provider is gone");
  // Checked again here (not only at creation): the runner never sends a test task anywhere.
  const taskRows = await collectableTasks(db, { splitId: col.splitId, parts: col.parts, taskIds: col.taskIds });
  const sealed = provider.kind === "openai" ? await providerSealedKey(db, provider.id) : null;
  const apiKey = sealed ? services.secrets.open(sealed) : "";
  const client =
    provider.kind === "openai" && provider.baseUrl
      ? providerClient(provider.baseUrl, apiKey, col.timeoutMs)
      : undefined;
  const price = await getPrice(db, col.model);
  const done = await collectionItemKeys(db, id);
  const items: Item[] = taskRows
    .flatMap((task) => Array.from({ length: col.nSamples }, (_, s) => ({ task, sampleIndex: s })))
    .filter((it) => !done.has(`${it.task.id}:${it.sampleIndex}`));
  const started = await updateActiveCollection(db, id, {
    state: "running",
    startedAt: col.startedAt ?? new Date(),
    tasksTotal: taskRows.length,
    samplesTotal: taskRows.length * col.nSamples,
  });
  if (!started) return;
  log.info(
    {
      tasks: taskRows.length,
      pending: items.length,
      resumed: done.size > 0,
      provider: provider.name,
      model: col.model,
    },
    "collection started",
  );

  let spent = col.costUsd;
  let stop: string | null = null;
  let failures = 0;
  let rateLimited = 0;
  let lastError = "";
  const ask = async (it: Item): Promise<void> => {
    const key = candidateCacheKey({
      fingerprint: it.task.fingerprint,
      promptHash: PROMPT_TEMPLATE_HASH,
      model: col.model,
      paramsHash: col.paramsHash,
      sampleIndex: it.sampleIndex,
    });
    const cached = await findCandidate(db, key);
    if (cached) {
      await recordReusedCandidate(db, { collectionId: id, taskRowId: it.task.id, sampleIndex: it.sampleIndex }, cached);
      return;
    }
    if (budgetReached(spent, col.budgetUsd)) {
      stop ??= `budget cap of $${(col.budgetUsd ?? 0).toFixed(4)} reached after spending $${spent.toFixed(4)}`;
      return;
    }
    const messages = renderRepairPrompt({
      instruction: it.task.instruction,
      files: it.task.files,
      public_tests: it.task.publicTests,
    });
    let reply: { text: string; usage: Usage; finishReason: string | null; latencyMs: number; rateLimited?: number };
    try {
      reply =
        provider.kind === "reference"
          ? referenceReply(it.task)
          : await callProvider(
              { baseUrl: provider.baseUrl, apiKey, client },
              col,
              messages,
              it.sampleIndex,
              signal,
              opts,
              provider.extraParams,
            );
    } catch (err) {
      if (signal.aborted) return;
      failures++;
      // ProviderCallError messages are scrubbed already; anything else is scrubbed here, and the
      // raw error object (SDK errors carry headers and bodies) is never logged.
      lastError = err instanceof ProviderCallError ? err.message : "unexpected error";
      if (err instanceof ProviderCallError) rateLimited += err.rateLimited;
      log.warn(
        {
          error: err instanceof ProviderCallError ? err.message : scrubbedMessage(err, [apiKey]),
          status: err instanceof ProviderCallError ? err.status : null,
          taskId: it.task.taskId,
          sampleIndex: it.sampleIndex,
        },
        "provider call failed",
      );
      await bumpCollection(db, id, { failed: 1 });
      return;
    }
    rateLimited += reply.rateLimited ?? 0;
    const cost = callCost(reply.usage, price);
    spent += cost;
    const parsed = parseAnswer(reply.text, mainPaths(it.task));
    await recordFreshCandidate(db, {
      candidate: {
        cacheKey: key,
        fingerprint: it.task.fingerprint,
        promptHash: PROMPT_TEMPLATE_HASH,
        model: col.model,
        paramsHash: col.paramsHash,
        sampleIndex: it.sampleIndex,
        providerKind: provider.kind,
        oracle: provider.kind === "reference",
        originTaskRowId: it.task.id,
        answer: reply.text,
        files: parsed.ok ? parsed.files : null,
        parseError: parsed.ok ? null : parsed.reason,
        finishReason: reply.finishReason,
        tokensIn: reply.usage.promptTokens,
        tokensOut: reply.usage.completionTokens,
        costUsd: cost,
        latencyMs: reply.latencyMs,
        // A malformed answer is graded here, without an agent: fail_syntax with the parser's reason.
        ...(parsed.ok ? {} : { verdict: "fail_syntax", verdictReasons: [parsed.reason], gradedAt: new Date() }),
      },
      ledger: {
        providerId: provider.id,
        model: col.model,
        experimentId: col.experimentId,
        collectionId: id,
        tokensIn: reply.usage.promptTokens,
        tokensOut: reply.usage.completionTokens,
        costUsd: cost,
      },
      item: { collectionId: id, taskRowId: it.task.id, sampleIndex: it.sampleIndex },
      delta: { done: 1, tokensIn: reply.usage.promptTokens, tokensOut: reply.usage.completionTokens, cost },
    });
  };

  let next = 0;
  const worker = async () => {
    while (!signal.aborted && next < items.length) {
      const it = items[next++];
      if (it) await ask(it);
    }
  };
  await Promise.all(Array.from({ length: Math.min(col.concurrency, Math.max(1, items.length)) }, worker));

  const failNote = failures > 0 ? `${failures} request(s) failed after retries; last: ${lastError}` : null;
  // Rate limits are waited out, never dropped; the count says how hard the provider pushed back.
  const rateNote = rateLimited > 0 ? `${rateLimited} rate-limited answer(s) (429) waited out per Retry-After` : null;
  if (signal.aborted) {
    // A cancel is recorded by whoever canceled; a shutdown leaves the run `running` for the next leader.
    log.info({ stop: signal.reason, asked: next }, "collection run stopped");
    return;
  }
  const verdict = failureVerdict(failures, items.length, (await getCollection(db, id))?.samplesDone ?? 0);
  if (verdict) {
    await updateActiveCollection(db, id, {
      state: "failed",
      stopReason: [verdict, stop, failNote, rateNote].filter(Boolean).join("; "),
      finishedAt: new Date(),
    });
    log.warn({ failures, asked: items.length, rateLimited }, "collection failed: too many samples failed");
    return;
  }
  const graded = col.grade ? await enqueueCollectionGrading(services, id) : 0;
  const state = stop ? "stopped_budget" : graded > 0 ? "grading" : "done";
  await updateActiveCollection(db, id, {
    state,
    stopReason: [stop, failNote, rateNote].filter(Boolean).join("; ") || null,
    finishedAt: state === "grading" ? null : new Date(),
  });
  log.info({ state, failures, rateLimited, spentUsd: spent, gradeJobs: graded }, "collection finished");
}

/** Above this share of failed requests a run is `failed`, not `done` with a note (docs/teacher.md). */
export const MAX_FAILED_SHARE = 0.5;

/**
 * Why a finished run counts as failed, or null: no usable sample at all, or more than
 * MAX_FAILED_SHARE of this run's requests failed after their retries.
 */
export function failureVerdict(failures: number, asked: number, usable: number): string | null {
  if (failures === 0) return null;
  if (usable === 0) return `no usable sample: all ${failures} request(s) failed`;
  if (failures > MAX_FAILED_SHARE * asked)
    return `${failures} of ${asked} request(s) failed (more than ${MAX_FAILED_SHARE * 100}%)`;
  return null;
}

/** The oracle: the task's own reference, in the answer format. Free, and labelled oracle everywhere. */
function referenceReply(task: TaskRowForCollect) {
  const mains = new Set(mainPaths(task));
  const files = task.reference.filter((f) => mains.has(f.path));
  return {
    text: formatAnswer(files),
    usage: { promptTokens: 0, completionTokens: 0 },
    finishReason: "reference",
    latencyMs: 0,
  };
}

function callProvider(
  { baseUrl, apiKey, client }: { baseUrl: string | null; apiKey: string; client?: OpenAI },
  col: CollectionRow,
  messages: ChatMessage[],
  sampleIndex: number,
  signal: AbortSignal,
  opts: RunnerOptions,
  extra: Record<string, unknown>,
) {
  if (!baseUrl) throw new DomainError("PRECONDITION_FAILED", "the provider has no base URL");
  return chatCompletion(
    {
      baseURL: baseUrl,
      apiKey,
      client,
      model: col.model,
      messages,
      params: { ...col.params, seed: sampleSeed(col.params.seed, sampleIndex) },
      extraParams: extra,
      timeoutMs: col.timeoutMs,
      maxRetries: col.maxRetries,
      signal,
    },
    opts.retry ?? DEFAULT_RETRY,
  );
}
