export * from "./schemas";
export * from "./verdict";
export * from "./runner-protocol";
export * from "./batch";
export * from "./helper-protocol";
