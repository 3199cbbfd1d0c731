export * from "./users";
export * from "./agents";
export * from "./jobs";
export * from "./tasks";
export * from "./teacher";
export * from "./experiments";
export * from "./audits";
export * from "./preference";
