export * from "./config";
export * from "./stages";
export * from "./selection";
export * from "./protocol";
export * from "./contamination";
export * from "./report";
export * from "./export";
