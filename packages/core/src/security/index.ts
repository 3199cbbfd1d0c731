export * from "./scrub";
export * from "./retry";
