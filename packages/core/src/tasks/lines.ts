// Streaming helpers for JSON Lines task files: bytes in, one raw line (bytes) out, so that UTF-8 is
// validated per line on the raw bytes and a big upload never has to be held as one string.

/** `overlong` is set (and `bytes` empty) when a line exceeded `maxLineBytes`: memory stays bounded and validation reports it. */
export type RawLine = { line: number; bytes: Uint8Array; overlong?: boolean };

type ByteSource = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

const NL = 0x0a;
const CR = 0x0d;

/** Splits a byte stream on `\n` (a trailing `\r` is dropped); blank lines are skipped but counted. */
export async function* splitLines(chunks: ByteSource, opts: { maxLineBytes?: number } = {}): AsyncGenerator<RawLine> {
  const max = opts.maxLineBytes ?? Number.POSITIVE_INFINITY;
  let parts: Uint8Array[] = [];
  let pending = 0;
  let line = 0;
  let overlong = false;
  const flush = (): RawLine | null => {
    line += 1;
    const wasOverlong = overlong;
    const bytes = wasOverlong ? new Uint8Array(0) : concat(parts, pending);
    parts = [];
    pending = 0;
    overlong = false;
    if (wasOverlong) return { line, bytes, overlong: true };
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
    const trimmed = end === bytes.length ? bytes : bytes.subarray(0, end);
    return isBlank(trimmed) ? null : { line, bytes: trimmed };
  };
  for await (const chunk of chunks) {
    let start = 0;
    for (let i = chunk.indexOf(NL); i !== -1; i = chunk.indexOf(NL, start)) {
      push(chunk.subarray(start, i));
      const out = flush();
      if (out) yield out;
      start = i + 1;
    }
    if (start < chunk.length) push(chunk.subarray(start));
  }
  if (pending > 0 || overlong) {
    const out = flush();
    if (out) yield out;
  }

  function push(part: Uint8Array) {
    if (overlong) return;
    if (pending + part.length > max) {
      overlong = true;
      parts = [];
      return;
    }
    // Copy: the caller may reuse its chunk buffers.
    parts.push(part.slice());
    pending += part.length;
  }
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1 && parts[0]) return parts[0];
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function isBlank(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== CR) return false;
  return true;
}

/** Passes bytes through, gunzipping when the stream starts with the gzip magic (so .jsonl and .jsonl.gz share one path). */
export async function* maybeGunzip(chunks: ByteSource): AsyncGenerator<Uint8Array> {
  const it = toAsyncIterator(chunks);
  const first = await it.next();
  if (first.done) return;
  const head = first.value;
  const rest: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: () => it };
  if (!(head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b)) {
    yield head;
    yield* rest;
    return;
  }
  // DecompressionStream is a web standard (Node ≥18 and browsers), so core stays free of Node modules.
  const ds = new DecompressionStream("gzip");
  const writer = ds.writable.getWriter();
  const pump = (async () => {
    await writer.write(head as Uint8Array<ArrayBuffer>);
    for await (const c of rest) await writer.write(c as Uint8Array<ArrayBuffer>);
    await writer.close();
  })();
  // Surface a pump failure through the reader, which then errors too.
  pump.catch((err: unknown) => writer.abort(err).catch(() => {}));
  const reader = ds.readable.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    yield value;
  }
  await pump;
}

function toAsyncIterator(src: ByteSource): AsyncIterator<Uint8Array> {
  if (Symbol.asyncIterator in src) return (src as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  const it = (src as Iterable<Uint8Array>)[Symbol.iterator]();
  return { next: async () => it.next() };
}
