import { constants } from "node:os";
import type { Readable } from "node:stream";

/** Reads a stream to the end, keeping at most `cap` bytes (the head); the rest is drained and dropped. */
export function collectOutput(stream: Readable | null, cap: number): Promise<{ text: string; truncated: boolean }> {
  return new Promise((resolve) => {
    if (!stream) return resolve({ text: "", truncated: false });
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    stream.on("data", (b: Buffer) => {
      if (kept >= cap) {
        truncated = true;
        return;
      }
      const take = b.subarray(0, cap - kept);
      if (take.length < b.length) truncated = true;
      chunks.push(take);
      kept += take.length;
    });
    stream.on("close", () => resolve({ text: Buffer.concat(chunks).toString("utf8"), truncated }));
  });
}

export function signalOf(n: number): string | null {
  for (const [name, num] of Object.entries(constants.signals)) if (num === n) return name;
  return null;
}
