// The import worker thread's entry: a worker starts without the parent's TypeScript loader, so it
// registers tsx's and then loads the real (TypeScript) module named by its parent.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.entry);
