import { Worker } from "node:worker_threads";
import type { ImportPreparer, ImportWorkerReply, ImportWorkerRequest } from "@agentlab/core";

// The server's import preparer: the core one, in a worker thread of its own per import. A 100k-task
// file took the event loop for minutes when parsed in line (agents' heartbeats went unanswered and
// their jobs were lost); in the worker the main thread only forwards the upload's chunks and runs
// the transaction. The thread's heap is capped, so a file that needs more fails the import (500)
// and not the server; its memory goes when the thread ends.

const BOOT = new URL("./boot.mjs", import.meta.url);
const ENTRY = new URL("./import-worker.ts", import.meta.url).href;
const HEAP_MB = 4096;
const decoder = new TextDecoder();

export function workerImportPreparer(): ImportPreparer {
  const worker = new Worker(BOOT, {
    workerData: { entry: ENTRY },
    resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
  });
  let waiting: { resolve: (m: ImportWorkerReply) => void; reject: (e: Error) => void } | null = null;
  let dead: Error | null = null;
  const fail = (err: Error) => {
    dead ??= err;
    waiting?.reject(dead);
    waiting = null;
  };
  worker.on("message", (m: ImportWorkerReply) => {
    const w = waiting;
    waiting = null;
    if (m.kind === "failed") w?.reject(new Error(`task import worker: ${m.message}`));
    else w?.resolve(m);
  });
  worker.on("error", (err) => fail(err));
  worker.on("exit", (code) => fail(new Error(`task import worker exited (code ${code})`)));
  const post = (m: ImportWorkerRequest) => worker.postMessage(m);
  const nextReply = () =>
    new Promise<ImportWorkerReply>((resolve, reject) => {
      if (dead) reject(dead);
      else waiting = { resolve, reject };
    });

  return {
    async prepare(chunks, limits) {
      const reply = nextReply();
      let answered = false;
      reply.then(
        () => (answered = true),
        () => (answered = true),
      );
      post({ kind: "start", limits });
      // Once the worker has answered (a limit stops it early) the rest of the upload is only
      // drained, so the caller still gets its 400 on an intact connection.
      for await (const bytes of chunks) if (!answered) post({ kind: "chunk", bytes });
      if (!answered) post({ kind: "end" });
      const m = await reply;
      if (m.kind === "refused") return { ok: false, problems: m.problems };
      if (m.kind !== "rows") throw new Error(`task import worker answered ${m.kind}, expected rows`);
      // One batch decoded per turn of the event loop: all of them at once is seconds at 100k tasks.
      const batches: string[] = [];
      for (const bytes of m.batches) {
        batches.push(decoder.decode(bytes));
        await new Promise((r) => setImmediate(r));
      }
      return { ok: true, tasks: m.tasks, batches };
    },
    async findings(existingJson, merged, mergeThreshold) {
      const reply = nextReply();
      post({ kind: "findings", existingJson, merged, mergeThreshold });
      const m = await reply;
      if (m.kind !== "findings") throw new Error(`task import worker answered ${m.kind}, expected findings`);
      return m.result;
    },
    async close() {
      await worker.terminate();
    },
  };
}
