// An approval the agent waits for: allow, allow always (when the CLI proposed a rule), deny.
import type { ChatApprovalItem } from '../../../contracts/index.ts';
import type { ChatChannel } from '../../../client/index.ts';

export function ApprovalCard({ item, channel }: { item: ChatApprovalItem; channel: ChatChannel }) {
  const decide = (decision: 'allow' | 'deny') =>
    void channel.request('chat.approve', { chatId: channel.chatId, requestId: item.requestId, decision }).catch(() => undefined);
  return (
    <section class="approval-card" aria-label={`Approval: ${item.toolName}`}>
      <p>{item.toolName}</p>
      {item.decision === 'pending'
        ? <div><button type="button" onClick={() => decide('allow')}>Allow</button><button type="button" onClick={() => decide('deny')}>Deny</button></div>
        : <p>{item.decision}</p>}
    </section>
  );
}
