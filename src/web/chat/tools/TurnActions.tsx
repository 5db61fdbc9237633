// What can be done with a finished turn: see its diff, fork the chat after it.
import type { ChatTurnItem } from '../../../contracts/index.ts';
import type { ChatChannel } from '../../../client/index.ts';

export function TurnActions(_props: { item: ChatTurnItem; channel: ChatChannel }) {
  return <span class="turn-actions" />;
}
