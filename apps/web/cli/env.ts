import { z } from "zod";

// The only place the CLI reads process.env; flags (--server, --token) override it.
// AGENTLAB_URL has no default here: unset, the server `agentlab login` stored is used, else DEFAULT_SERVER.
const CliEnv = z.object({
  AGENTLAB_URL: z.string().url().optional(),
  AGENTLAB_TOKEN: z.string().min(1).optional(),
  /** Where `agentlab login` keeps its credentials (default $XDG_CONFIG_HOME/agentlab or ~/.config/agentlab). */
  AGENTLAB_CONFIG_DIR: z.string().min(1).optional(),
  XDG_CONFIG_HOME: z.string().min(1).optional(),
  HOME: z.string().min(1).optional(),
  NO_COLOR: z.string().optional(),
});
export const DEFAULT_SERVER = "http://127.0.0.1:3000";
export type CliEnv = z.infer<typeof CliEnv>;

export function loadCliEnv(source: Record<string, string | undefined> = process.env): CliEnv {
  const parsed = CliEnv.safeParse(source);
  if (!parsed.success)
    throw new Error(
      `invalid environment: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  return parsed.data;
}

/** A variable the user names on the command line (e.g. `--api-key-env OPENAI_API_KEY`): secrets stay out of argv and shell history. */
export const namedEnvVar = (
  name: string,
  source: Record<string, string | undefined> = process.env,
): string | undefined => source[name] || undefined;
