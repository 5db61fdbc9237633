// The service worker's build, after the app's (scripts/build-web.ts): one self-contained classic
// script at the root, /sw.js (its scope is the whole app), with everything it imports inlined. It is
// built apart from the app so that the code both use (the device key in IndexedDB, the signing) is
// copied into it rather than split into a chunk the worker would have to import.
import path from 'node:path';
import { defineConfig } from 'vite';

const root = import.meta.dirname;

export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  build: {
    outDir: path.join(root, '..', '..', 'dist', 'web'),
    emptyOutDir: false,
    target: 'es2022',
    sourcemap: false,
    copyPublicDir: false,
    rollupOptions: {
      input: { sw: path.join(root, 'sw', 'sw.ts') },
      output: { format: 'iife', entryFileNames: 'sw.js', inlineDynamicImports: true },
    },
  },
});
