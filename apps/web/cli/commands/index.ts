import type { Command } from "../command";
import { taskCommands } from "./tasks";
import { poolCommands } from "./pools";
import { splitCommands } from "./splits";

// Later areas (collect, datasets export, experiments, reports) add a file and one spread here.
export const commands: Command[] = [...taskCommands, ...poolCommands, ...splitCommands];
