export { RelaySocket, relayPaths } from './socket.ts';
export type { RelaySocketOptions } from './socket.ts';
