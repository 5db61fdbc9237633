// The web app's build: Preact through Vite into dist/web, which the Worker serves as static assets
// (wrangler.toml [assets]). React-only libraries (the virtualizer) run on preact/compat.
import path from 'node:path';
import { defineConfig } from 'vite';

const root = import.meta.dirname;

export default defineConfig({
  root,
  base: '/',
  publicDir: path.join(root, 'public'),
  resolve: {
    alias: {
      react: 'preact/compat',
      'react-dom': 'preact/compat',
      'react/jsx-runtime': 'preact/jsx-runtime',
    },
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.join(root, '..', '..', 'dist', 'web'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The service worker is built apart (vite.sw.config.ts): it shares code with the app (the device
    // key, the signing), and a shared chunk would be an ES import a classic worker cannot load.
    rollupOptions: {
      input: { app: path.join(root, 'index.html') },
      output: { entryFileNames: 'assets/[name]-[hash].js' },
    },
  },
});
