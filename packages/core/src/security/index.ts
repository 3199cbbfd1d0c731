export * from "./scrub";
export * from "./retry";
export * from "./roles";
export * from "./pg-text";
