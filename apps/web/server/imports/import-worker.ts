import { parentPort } from "node:worker_threads";
import {
  createImportPreparer,
  type ImportWorkerReply,
  type ImportWorkerRequest,
} from "@agentlab/core/tasks/import-prep";
import type { TaskLimits } from "@agentlab/core/tasks/spec";

// The import worker thread: the core preparer over the chunks its parent posts. Parsing,
// validating, hashing and the proposals of a 100k-task file run here, off the server's event loop.

const port = parentPort;
if (!port) throw new Error("import-worker.ts runs as a worker thread (see worker-preparer.ts)");
const preparer = createImportPreparer();
const encoder = new TextEncoder();
const queue = chunkQueue();
const reply = (m: ImportWorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
const failed = (err: unknown) => reply({ kind: "failed", message: err instanceof Error ? err.message : String(err) });

port.on("message", (m: ImportWorkerRequest) => {
  if (m.kind === "start") start(m.limits);
  else if (m.kind === "chunk") queue.push(m.bytes);
  else if (m.kind === "end") queue.end();
  else
    preparer
      .findings(m.existingJson, m.merged, m.mergeThreshold)
      .then((result) => reply({ kind: "findings", result }), failed);
});

function start(limits: Partial<TaskLimits> | undefined) {
  preparer.prepare(queue.chunks(), limits).then((result) => {
    if (!result.ok) return reply({ kind: "refused", problems: result.problems });
    // Moved, not cloned: the parent only decodes one batch at a time (see worker-preparer.ts).
    const batches = result.batches.map((b) => encoder.encode(b));
    reply(
      { kind: "rows", tasks: result.tasks, batches },
      batches.map((b) => b.buffer),
    );
  }, failed);
}

/** The posted chunks as an async iterable; validation pulls them as it goes. */
function chunkQueue() {
  const items: Uint8Array[] = [];
  let ended = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  return {
    push(b: Uint8Array) {
      items.push(b);
      notify();
    },
    end() {
      ended = true;
      notify();
    },
    async *chunks(): AsyncGenerator<Uint8Array> {
      for (;;) {
        const next = items.shift();
        if (next) yield next;
        else if (ended) return;
        else await new Promise<void>((r) => (wake = r));
      }
    },
  };
}
