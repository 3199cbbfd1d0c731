import type { Command } from "../command";
import { taskCommands } from "./tasks";
import { poolCommands } from "./pools";
import { splitCommands } from "./splits";
import { collectCommands } from "./collect";
import { datasetCommands } from "./datasets";
import { statsCommands } from "./stats";
import { experimentCommands } from "./experiments";
import { opsCommands } from "./ops";
import { pairCommands } from "./pairs";
import { studyCommands } from "./studies";
import { loginCommands } from "./login";
import { episodeCommands } from "./episodes";

// Later areas (collect, datasets export, experiments, reports) add a file and one spread here.
export const commands: Command[] = [
  ...taskCommands,
  ...poolCommands,
  ...splitCommands,
  ...collectCommands,
  ...datasetCommands,
  ...statsCommands,
  ...experimentCommands,
  ...opsCommands,
  ...pairCommands,
  ...loginCommands,
  ...studyCommands,
  ...episodeCommands,
];
