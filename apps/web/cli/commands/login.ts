import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { writeLine, type Command } from "../command";
import { credentialsPath, removeCredentials, writeCredentials } from "../credentials";

// The token comes from standard input (pasted at the prompt or piped), never from argv, so it
// stays out of shell history and `ps`; it is checked against the server before it is stored.

async function firstLine(input: Readable | undefined): Promise<string> {
  if (!input) return "";
  const rl = createInterface({ input, terminal: false });
  for await (const line of rl) {
    rl.close();
    return line.trim();
  }
  return "";
}

const login: Command = {
  name: "login",
  usage: "agentlab login [--server URL]   (then paste a token from Settings → API tokens)",
  summary: "check an API token against the server and store both for later commands (0600 file in your config folder)",
  async run(_args, ctx) {
    if (ctx.in && "isTTY" in ctx.in && ctx.in.isTTY)
      ctx.err.write(`API token for ${ctx.server} (Settings → API tokens): `);
    const token = ctx.explicitToken ?? (await firstLine(ctx.in));
    if (!token) {
      writeLine(ctx.err, "agentlab: no token given: paste it at the prompt or pipe it (echo $TOKEN | agentlab login)");
      return 2;
    }
    const me = await ctx.connect(token).trpc.auth.me.query();
    if (!me) {
      writeLine(ctx.err, `agentlab: token rejected by ${ctx.server} (create a new one under Settings → API tokens)`);
      return 1;
    }
    const path = writeCredentials(ctx.env, { server: ctx.server, token });
    writeLine(ctx.out, `logged in to ${ctx.server} as ${me.email} (${me.role}); credentials in ${path}`);
    return 0;
  },
};

const logout: Command = {
  name: "logout",
  usage: "agentlab logout",
  summary: "forget the stored server and token (the token itself stays valid until revoked in Settings)",
  async run(_args, ctx) {
    const removed = removeCredentials(ctx.env);
    writeLine(ctx.out, removed ? `removed ${credentialsPath(ctx.env)}` : "not logged in: no stored credentials");
    return 0;
  },
};

export const loginCommands: Command[] = [login, logout];
