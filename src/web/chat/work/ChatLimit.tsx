// The limit the chat's last turn stopped on (ChatInfo.limit: a plan's usage limit or the provider's
// overload), shown in the chat's header until the next turn opens, with when it resets when the CLI
// named a time, and when the host will take the chat up again itself (`resumeAt`).
import type { ChatInfo } from '../../../contracts/index.ts';
import { momentText } from '../../usage/format.ts';

export function limitWords(info: Pick<ChatInfo, 'limit' | 'resumeAt'>): string | null {
  const limit = info.limit;
  if (!limit) return null;
  const what = limit.kind === 'usage' ? 'Stopped on the usage limit' : 'Stopped: the provider is overloaded';
  const resets = limit.resetsAt !== undefined ? `; resets ${momentText(limit.resetsAt)}` : limit.kind === 'usage' ? '; the CLI named no reset time' : '';
  const resumes = info.resumeAt !== undefined ? `. Continues by itself ${momentText(info.resumeAt)}` : '';
  return `${what}${resets}${resumes}`;
}

export function ChatLimit({ info }: { info: ChatInfo }) {
  const words = limitWords(info);
  if (!words) return null;
  return (
    <p class={`chat-limit limit-${info.limit!.kind}`} role="status" data-resets-at={info.limit!.resetsAt}>
      {words}
    </p>
  );
}
