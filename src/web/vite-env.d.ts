// Vite's additions to `import.meta` (glob imports) for the app's type check.
/// <reference types="vite/client" />
