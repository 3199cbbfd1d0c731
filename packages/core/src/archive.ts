import { z } from "zod";

// The tRPC inputs shared by every archivable thing (pools, splits, datasets, providers; the runs
// table's experiments use the same shape): one toggle to list archived rows, one call to set or
// clear the mark, so the five pages behave alike.

/** List input: archived rows are hidden unless asked for. */
export const ArchivedFilter = z.object({ includeArchived: z.boolean().default(false) });

export const ArchiveInput = z.object({ id: z.string().uuid(), archived: z.boolean() });
export type ArchiveInput = z.infer<typeof ArchiveInput>;

/** Instruction search in a pool; `text` uses web search syntax: words, "phrases", or, -word. */
export const TaskSearchInput = z.object({
  poolId: z.string().uuid(),
  text: z.string().trim().min(1, "type something to search for").max(500),
  offset: z.number().int().min(0).default(0),
  limit: z.number().int().min(1).max(200).default(50),
});
