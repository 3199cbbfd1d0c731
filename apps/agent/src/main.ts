import { loadAgentEnv } from "./env";
import { enrollCommand } from "./cli/enroll";
import { runCommand } from "./cli/run";
import { doctorCommand } from "./cli/doctor";

const USAGE = `agentlab-agent — runs agentlab jobs on this box

  enroll --server URL --token T [--name N]   exchange a one-time token for a stored credential
  run [--drain]                              connect and run jobs (SIGUSR2: drain)
  doctor [--json]                            what this box has and what is missing`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const env = loadAgentEnv();
  switch (command) {
    case "enroll":
      return enrollCommand(rest, env);
    case "run":
      return runCommand(rest, env);
    case "doctor":
      return doctorCommand(rest, env);
    default:
      console.log(USAGE);
      return command === undefined || command === "help" || command === "--help" ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
