import type { LogChunk } from "@agentlab/core";

// Batches a job's output into ordered chunks: flushed every `intervalMs`, at `maxBytes`, and at the end.
export class LogStream {
  private seq = 0;
  private pending: { stream: LogChunk["stream"]; data: string } | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly sink: (chunks: LogChunk[]) => void,
    private readonly intervalMs = 250,
    private readonly maxBytes = 64 * 1024,
  ) {}

  write(stream: LogChunk["stream"], data: string) {
    if (this.pending && this.pending.stream !== stream) this.flush();
    this.pending = this.pending ? { stream, data: this.pending.data + data } : { stream, data };
    if (this.pending.data.length >= this.maxBytes) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  }

  flush() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.pending) return;
    const { stream, data } = this.pending;
    this.pending = null;
    const chunks: LogChunk[] = [];
    for (let i = 0; i < data.length; i += this.maxBytes)
      chunks.push({ seq: this.seq++, stream, data: data.slice(i, i + this.maxBytes) });
    this.sink(chunks);
  }

  get lastSeq() {
    return this.seq - 1;
  }
}
