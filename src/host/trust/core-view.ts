// What the verifier asks of the runtime, answered from the host's own chats: a chat's provider and
// account (for an account switch), and the waiting approval or question a settling request names,
// exactly as the host presented it to clients.
import { terminalApprovalShown, type SettledRequest } from '../../contracts/index.ts';
import type { HostCore } from '../chats/core.ts';
import type { HostView } from './verify.ts';

export function coreView(core: HostCore): HostView {
  return {
    chat: (chatId) => {
      const info = core.sessions.get(chatId)?.info;
      return info ? { provider: info.provider, ...(info.account === undefined ? {} : { account: info.account }) } : null;
    },
    settled: (type, payload) => {
      const p = (typeof payload === 'object' && payload !== null ? payload : {}) as {
        chatId?: unknown;
        sessionId?: unknown;
        requestId?: unknown;
        itemId?: unknown;
      };
      if (type === 'session.approve') {
        const approval = core.terminal.list().approvals.find((a) => a.sessionId === p.sessionId && a.requestId === p.requestId);
        return approval ? terminalApprovalShown(approval) : null;
      }
      if (typeof p.chatId !== 'string') return null;
      const session = core.sessions.get(p.chatId);
      if (!session) return null;
      const item = session.pendingRequests().find((i) => (type === 'chat.dismiss' ? i.id === p.itemId : 'requestId' in i && i.requestId === p.requestId));
      if (item?.kind === 'approval')
        return { kind: 'approval', requestId: item.requestId, toolName: item.toolName, input: item.input } satisfies SettledRequest;
      if (item?.kind === 'question') return { kind: 'question', requestId: item.requestId, questions: item.questions } satisfies SettledRequest;
      return null;
    },
  };
}
