export * from "./scrub";
export { scrubKnown } from "./scrub-known";
export * from "./retry";
export * from "./roles";
export * from "./pg-text";
export * from "./share-report";
