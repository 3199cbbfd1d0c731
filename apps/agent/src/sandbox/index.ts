export * from "./types";
export { run } from "./run";
export { selfTest, type SelfTestResult } from "./selftest";
export { cgroupSupport, leftoverCgroups } from "./cgroup";
export { Zygote } from "./zygote";
