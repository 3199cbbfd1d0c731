export * from "./pairs";
export * from "./stats";
export * from "./on-policy";
export * from "./near-miss";
export * from "./episode-branch";
