import { sql, type SQL } from "drizzle-orm";
import { EVENTS_CHANNEL, JobEndedEvent, type CollectionWakeEvent, type ExperimentWakeEvent } from "@agentlab/core";
import { queryRows, type Db } from "../client";

// The queue's NOTIFYs. Postgres delivers a NOTIFY only when its transaction commits, so issuing it
// in the statement (or transaction) that writes the terminal state means a listener never hears of
// an end that was rolled back, and hears of every one that was not (while it is connected; the
// consumer's slow sweep covers the gaps). Payloads are parsed on the other side by core's schemas.

/**
 * A select-list expression over a row source `alias` with columns id, type, state, experiment_id:
 * notifies when the row's state is terminal, yields null otherwise.
 */
export const notifyIfEnded = (alias: string): SQL =>
  sql`case when ${sql.raw(alias)}.state in ('succeeded', 'failed', 'canceled') then pg_notify(${EVENTS_CHANNEL},
        json_build_object('kind', 'job', 'jobId', ${sql.raw(alias)}.id, 'type', ${sql.raw(alias)}.type,
          'state', ${sql.raw(alias)}.state, 'experimentId', ${sql.raw(alias)}.experiment_id)::text) end`;

/** The event a terminal row stands for (what notifyIfEnded sent), for the in-process listeners. */
export const endedEvent = (r: {
  id: string;
  type: string;
  state: string;
  experiment_id: string | null;
}): JobEndedEvent | null =>
  r.state === "succeeded" || r.state === "failed" || r.state === "canceled"
    ? JobEndedEvent.parse({ kind: "job", jobId: r.id, type: r.type, state: r.state, experimentId: r.experiment_id })
    : null;

/** Announces to every instance that an experiment can move (created, resumed), once `db`'s transaction commits. */
export async function notifyExperimentWake(db: Db, experimentId: string): Promise<void> {
  const event: ExperimentWakeEvent = { kind: "experiment", experimentId };
  await queryRows(db, sql`select pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify(event)})`);
}

/** Announces to every instance that a collection was created or canceled, once `db`'s transaction commits. */
export async function notifyCollectionWake(db: Db, collectionId: string): Promise<void> {
  const event: CollectionWakeEvent = { kind: "collection", collectionId };
  await queryRows(db, sql`select pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify(event)})`);
}
