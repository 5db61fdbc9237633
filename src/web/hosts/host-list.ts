// The hosts the signed-in person reaches, with live presence: the relay's list once, then each host's
// lobby socket (session.ts) says when it comes and goes. Shared by the hosts page, the chat list and
// the new-chat form, so each host has one lobby however many views show it.
import { signal } from '@preact/signals';
import type { ChatInfo, HostSummary } from '../../contracts/index.ts';
import { api, hostConnection, releaseHost } from '../app/session.ts';

export const hosts = signal<HostSummary[] | null>(null);
export const hostsError = signal<string | null>(null);
/** Presence by host id, as the lobbies report it (absent: not heard yet; the summary's `online` then). */
export const presence = signal<ReadonlyMap<string, boolean>>(new Map());

const watched = new Map<string, () => void>();
/** Hosts whose lobby the relay refused for good: not opened again this session (no reconnect loop). */
const refused = new Set<string>();
let loading: Promise<void> | null = null;
const statusListeners = new Set<(hostId: string, info: ChatInfo) => void>();

/** Every chat status any watched host's lobby reports (the chat list keeps itself live with it). */
export function onChatStatus(listener: (hostId: string, info: ChatInfo) => void): () => void {
  statusListeners.add(listener);
  return () => statusListeners.delete(listener);
}

/** Loads the list (once; `again` reloads it) and watches every host's presence. */
export function loadHosts(again = false): Promise<void> {
  if (loading && !again) return loading;
  loading = api.hosts().then(
    (list) => {
      hosts.value = list;
      hostsError.value = null;
      for (const host of list) watch(host.id);
      for (const id of [...watched.keys()]) if (!list.some((h) => h.id === id)) forget(id);
    },
    (error: unknown) => {
      hostsError.value = error instanceof Error ? error.message : String(error);
      loading = null;
    },
  );
  return loading;
}

function watch(hostId: string): void {
  if (watched.has(hostId) || refused.has(hostId)) return;
  const connection = hostConnection(hostId);
  const set = (online: boolean) => {
    presence.value = new Map(presence.value).set(hostId, online);
  };
  if (connection.online !== null) set(connection.online);
  const stopPresence = connection.onPresence((online) => {
    set(online);
    // A host that drops may have been revoked (the relay keeps people's lobbies of a revoked host
    // open): the list again says whether it still exists. Presence changes are rare; one GET each.
    if (!online) void loadHosts(true);
  });
  for (const info of connection.statuses.values()) for (const listener of statusListeners) listener(hostId, info);
  const stopStatus = connection.onStatus((info) => {
    for (const listener of statusListeners) listener(hostId, info);
  });
  // A lobby the relay closed for good (host revoked, access taken away) means the list changed.
  const stopState = connection.onState((state) => {
    if (state !== 'closed' || !api.signedIn) return; // signing out closes every lobby: nothing changed
    refused.add(hostId);
    forget(hostId);
    void loadHosts(true);
  });
  watched.set(hostId, () => {
    stopPresence();
    stopStatus();
    stopState();
  });
}

function forget(hostId: string): void {
  watched.get(hostId)?.();
  watched.delete(hostId);
  releaseHost(hostId);
}

export function isOnline(host: HostSummary): boolean {
  return presence.value.get(host.id) ?? host.online;
}

export function hostName(hostId: string): string {
  return hosts.value?.find((h) => h.id === hostId)?.name ?? hostId;
}

/** After a rename, revoke or pairing: the list again. */
export function hostsChanged(): Promise<void> {
  return loadHosts(true);
}

api.onSignedOut(() => {
  for (const stop of watched.values()) stop();
  watched.clear();
  refused.clear();
  hosts.value = null;
  presence.value = new Map();
  loading = null;
});
