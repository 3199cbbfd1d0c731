export * from "./holm";
export * from "./budget";
export * from "./factors";
export * from "./definition";
export * from "./report";
export * from "./plan";
