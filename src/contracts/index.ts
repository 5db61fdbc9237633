// The whole agent-contracts surface, one import away. Each subpath stays
// importable on its own for callers that want a smaller bundle.
export * from './agent.ts';
export * from './chat.ts';
export * from './envelope.ts';
export * from './ids.ts';
export * from './limits.ts';
export * from './model.ts';
export * from './protocol.ts';
export * from './provider-accounts.ts';
export * from './task.ts';
export * from './text.ts';
export * from './usage.ts';
export * from './visual.ts';
export * from './worktree.ts';
export * from './errors.ts';
export * from './link.ts';
export * from './thread.ts';
export * from './relay.ts';
export * from './hosts.ts';
export * from './teams.ts';
export * from './push.ts';
export * from './transcript.ts';
export * from './sessions.ts';
export * from './health.ts';
export * from './metrics.ts';
export * from './signing.ts';
export * from './requests.ts';
