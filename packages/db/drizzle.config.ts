import { defineConfig } from "drizzle-kit";

// Migrations are generated from the schema into /drizzle and checked in; the app applies them at start.
export default defineConfig({
  dialect: "postgresql",
  schema: "./packages/db/src/schema/index.ts",
  out: "./drizzle",
});
