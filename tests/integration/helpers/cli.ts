import { Readable, Writable } from "node:stream";
import { main as cli } from "../../../apps/web/cli/main";

// The `agentlab` CLI in this process with its output captured: exit code, stdout, stderr.

function capture() {
  const chunks: string[] = [];
  const w = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c.toString()), cb()) });
  return { w, text: () => chunks.join("") };
}

export async function runCli(
  args: string[],
  opts: { cwd: string; env: Record<string, string>; stdin?: string },
): Promise<{ code: number; out: string; err: string }> {
  const out = capture();
  const err = capture();
  const io = {
    out: out.w,
    err: err.w,
    cwd: opts.cwd,
    ...(opts.stdin === undefined ? {} : { in: Readable.from([opts.stdin]) }),
  };
  const code = await cli(args, io, opts.env);
  return { code, out: out.text(), err: err.text() };
}
