// What the chat's agent CLI can do, from the host's `provider.list` (asked once per host, on its lobby
// socket). Controls are offered only where their capability is there: a deny reason, `@` mentions,
// attachments, dismissing an async question. Until the list came, a capability reads as unknown (null).
import { signal, type Signal } from '@preact/signals';
import type { ChatChannel } from '../../../client/index.ts';
import type { AgentKind, ProviderCapabilities, ProviderInfo } from '../../../contracts/index.ts';
import { hostConnection } from '../../app/session.ts';

const catalogs = new Map<string, Signal<ProviderInfo[] | null>>();

/** The host's providers; null until they came (a failed ask is tried again on the next read). */
export function hostProviders(hostId: string): ProviderInfo[] | null {
  let catalog = catalogs.get(hostId);
  if (!catalog) {
    const made = signal<ProviderInfo[] | null>(null);
    catalogs.set(hostId, made);
    hostConnection(hostId)
      .request('provider.list', {})
      .then(
        (result) => {
          made.value = result.providers;
        },
        () => {
          catalogs.delete(hostId);
        },
      );
    catalog = made;
  }
  return catalog.value;
}

export function providerCapabilities(hostId: string, kind: AgentKind | undefined): ProviderCapabilities | null {
  if (!kind) return null;
  return hostProviders(hostId)?.find((provider) => provider.kind === kind)?.capabilities ?? null;
}

/** The capabilities of the CLI this chat runs (the component redraws when they arrive). */
export function chatCapabilities(channel: ChatChannel): ProviderCapabilities | null {
  return providerCapabilities(channel.hostId, channel.thread.info?.provider);
}
