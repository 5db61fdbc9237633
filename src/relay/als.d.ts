// The one Node module the Worker uses: workerd's `nodejs_als` compatibility flag provides
// node:async_hooks' AsyncLocalStorage (log.ts carries each request's id with it), and nothing else of
// Node. The relay's TypeScript project has no Node types, so this says exactly what it may use.
declare module 'node:async_hooks' {
  export class AsyncLocalStorage<T> {
    run<R>(store: T, callback: () => R): R;
    getStore(): T | undefined;
  }
}
