// The job queue's SQL, by concern: enqueue, claim and lease renewal, an attempt's writes while it
// runs, its end (finish, reaper, cancel: one write, one retry rule, one NOTIFY), and reads.
export * from "./enqueue";
export * from "./claim";
export * from "./attempt-writes";
export * from "./finish";
export * from "./finish-and-claim";
export * from "./reaper";
export * from "./cancel";
export * from "./read";
export * from "./queue-wait";
