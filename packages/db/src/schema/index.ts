export * from "./users";
export * from "./agents";
export * from "./jobs";
