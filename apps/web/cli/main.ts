import { TRPCClientError } from "@trpc/client";
import { UsageError, parseCommandArgs, writeLine, type CliIo, type Command } from "./command";
import { commands } from "./commands";
import { createApiClient, type ApiClient } from "./client";
import { DEFAULT_SERVER, loadCliEnv } from "./env";
import { readCredentials, sameServer, type Credentials } from "./credentials";
import { NetworkError, describeError } from "../client/errors";

const GLOBAL = /^--(server|token)(?:=(.*))?$/;

function help(io: CliIo, list: Command[]) {
  writeLine(io.out, "usage: agentlab [--server URL] [--token TOKEN] <command> [args]\n");
  for (const c of list) writeLine(io.out, `  ${c.usage}\n      ${c.summary}`);
  writeLine(
    io.out,
    `\nenvironment: AGENTLAB_URL (default: the server of agentlab login, else ${DEFAULT_SERVER}), AGENTLAB_TOKEN (a personal API token; agentlab login stores one instead)`,
  );
}

/** Runs one CLI invocation and returns its exit code; `io` lets tests capture the output. */
export async function main(
  argv: string[],
  io: CliIo = { out: process.stdout, err: process.stderr, cwd: process.cwd(), in: process.stdin },
  envSource?: Record<string, string | undefined>,
): Promise<number> {
  const env = loadCliEnv(envSource);
  let server = env.AGENTLAB_URL;
  let token = env.AGENTLAB_TOKEN;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const m = GLOBAL.exec(arg);
    if (!m) {
      rest.push(arg);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined) return usage(io, `--${m[1]} needs a value`);
    if (m[1] === "server") server = value;
    else token = value;
  }
  const cmd = commands.find((c) => c.name.split(" ").every((w, i) => rest[i] === w));
  if (!cmd) {
    help(io, commands);
    return rest.length === 0 || rest[0] === "help" || rest[0] === "--help" ? 0 : 2;
  }
  // Flags, then the environment, then what `agentlab login` stored; its token only for its own server.
  // A damaged file must not stop `agentlab login` from replacing it: its error waits for api().
  let stored: Credentials | null = null;
  let storedError: string | null = null;
  if (server === undefined || token === undefined)
    try {
      stored = readCredentials(env);
    } catch (err) {
      storedError = err instanceof Error ? err.message : String(err);
    }
  const target = server ?? stored?.server ?? DEFAULT_SERVER;
  const explicitToken = token;
  const useToken = token ?? (stored && sameServer(stored.server, target) ? stored.token : undefined);
  let client: ApiClient | null = null;
  const ctx = {
    ...io,
    server: target,
    env,
    explicitToken,
    connect: (t: string) => createApiClient(target, t),
    api: () => {
      if (!useToken && storedError) throw new UsageError(storedError);
      if (!useToken)
        throw new UsageError(
          "no API token: run agentlab login, pass --token or set AGENTLAB_TOKEN (create one under Settings → API tokens)",
        );
      client ??= createApiClient(target, useToken);
      return client;
    },
  };
  try {
    const args = parseCommandArgs(cmd, rest.slice(cmd.name.split(" ").length));
    if (args.values.help) {
      writeLine(io.out, `usage: ${cmd.usage}\n  ${cmd.summary}`);
      return 0;
    }
    return await cmd.run(args, ctx);
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION")
      return usage(io, `${(err as Error).message}\nusage: ${cmd.usage}`);
    if (err instanceof TRPCClientError || err instanceof NetworkError) {
      writeLine(io.err, `agentlab: ${cliErrorMessage(err, target)}`);
      return 1;
    }
    throw err;
  }
}

function usage(io: CliIo, message: string): number {
  writeLine(io.err, `agentlab: ${message}`);
  return 2;
}

/** "token rejected" and "cannot reach URL" instead of the server's "sign in first" and fetch's "fetch failed". */
function cliErrorMessage(err: unknown, server: string): string {
  const d = describeError(err);
  if (d.code === "NETWORK" || err instanceof NetworkError)
    return `cannot reach ${server} (is the server running? set --server or AGENTLAB_URL)`;
  if (d.status === 401) return `token rejected by ${server} (create a new one under Settings → API tokens)`;
  return d.message;
}
