export * from "./pairs";
export * from "./stats";
