#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx: no build step for the agent.
import { register } from "tsx/esm/api";
register();
await import("../src/main.ts");
