import { loadAgentEnv } from "./env";
import { enrollCommand } from "./cli/enroll";
import { runCommand } from "./cli/run";
import { doctorCommand } from "./cli/doctor";
import { gradeCommand } from "./cli/grade";

const USAGE = `agentlab-agent — runs agentlab jobs on this box

  enroll --server URL --token T [--name N]   exchange a one-time token for a stored credential
  run [--drain]                              connect and run jobs (SIGUSR2: drain)
  doctor [--json]                            what this box has and what is missing
  grade --task TASK.json --candidate FILE [--json] [--backend bwrap|process] [--isolation judge|in_process]
                                             grade one candidate offline and print the verdict
  grade --batch FILE.jsonl [--json] [...]    grade {"task": PATH, "candidate": PATH} lines in order,
                                             one warm sandbox, one result line per input line`;

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
    case "grade":
      return gradeCommand(rest);
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
