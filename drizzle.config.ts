import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/relay/db/schema.ts',
  out: './migrations',
});
