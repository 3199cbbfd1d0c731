import { z } from "zod";
import { ArchiveInput, ArchivedFilter, DomainError, PriceInput, ProviderInput, ProviderUpdate } from "@agentlab/core";
import {
  deletePrice,
  deleteProvider,
  getProvider,
  insertProvider,
  listPrices,
  listProviders,
  setArchived,
  setPrice,
  updateProvider,
} from "@agentlab/db";
import { adminProcedure, router, viewerProcedure } from "../trpc/init";

// Teacher providers. The API key is write-only: it is sealed on the way in, and no procedure
// returns it (reads say only `hasApiKey`).

const Id = z.object({ id: z.string().uuid() });

function checkShape(kind: string, baseUrl: string | null | undefined) {
  if (kind === "openai" && !baseUrl) throw new DomainError("BAD_REQUEST", "an openai provider needs a base URL");
}

export const providersRouter = router({
  list: viewerProcedure
    .input(ArchivedFilter.default({ includeArchived: false }))
    .query(({ ctx, input }) => listProviders(ctx.db, { hideArchived: !input.includeArchived })),

  /** Hides a provider that collections used (so it cannot be deleted) from lists and the experiment form. */
  archive: adminProcedure
    .input(ArchiveInput)
    .mutation(({ ctx, input }) => setArchived(ctx.db, "provider", input.id, input.archived)),

  byId: viewerProcedure.input(Id).query(async ({ ctx, input }) => {
    const p = await getProvider(ctx.db, input.id);
    if (!p) throw new DomainError("NOT_FOUND", "no such provider");
    return p;
  }),

  create: adminProcedure.input(ProviderInput).mutation(async ({ ctx, input }) => {
    checkShape(input.kind, input.baseUrl);
    const p = await insertProvider(ctx.db, {
      name: input.name,
      kind: input.kind,
      baseUrl: input.kind === "reference" ? null : (input.baseUrl ?? null),
      model: input.model,
      apiKeySealed: input.kind === "openai" && input.apiKey ? ctx.secrets.seal(input.apiKey) : null,
      extraParams: input.extraParams,
      createdBy: ctx.viewer.userId,
    });
    ctx.log.info(
      { providerId: p.id, name: p.name, kind: p.kind, model: p.model, hasApiKey: p.hasApiKey },
      "provider created",
    );
    return p;
  }),

  update: adminProcedure.input(ProviderUpdate).mutation(async ({ ctx, input }) => {
    const current = await getProvider(ctx.db, input.id);
    if (!current) throw new DomainError("NOT_FOUND", "no such provider");
    checkShape(input.kind ?? current.kind, input.baseUrl === undefined ? current.baseUrl : input.baseUrl);
    const sealed = input.clearApiKey
      ? { apiKeySealed: null }
      : input.apiKey
        ? { apiKeySealed: ctx.secrets.seal(input.apiKey) }
        : {};
    const p = await updateProvider(ctx.db, input.id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.kind !== undefined ? { kind: input.kind } : {}),
      ...(input.baseUrl !== undefined ? { baseUrl: input.baseUrl } : {}),
      ...(input.model !== undefined ? { model: input.model } : {}),
      ...(input.extraParams !== undefined ? { extraParams: input.extraParams } : {}),
      ...sealed,
    });
    ctx.log.info({ providerId: p.id, keyChanged: "apiKeySealed" in sealed }, "provider updated");
    return p;
  }),

  delete: adminProcedure.input(Id).mutation(async ({ ctx, input }) => {
    await deleteProvider(ctx.db, input.id);
    return { ok: true };
  }),

  prices: viewerProcedure.query(({ ctx }) => listPrices(ctx.db)),
  setPrice: adminProcedure.input(PriceInput).mutation(({ ctx, input }) => setPrice(ctx.db, input)),
  deletePrice: adminProcedure
    .input(z.object({ model: z.string().min(1) }))
    .mutation(async ({ ctx, input }) => (await deletePrice(ctx.db, input.model), { ok: true })),
});
