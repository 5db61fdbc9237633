// A chat saved as a transcript file: the whole chat (older pages loaded first), as JSON in the
// ChatTranscript shape or as Markdown, handed to the browser as a download.
import { chatTitle, transcriptJson, transcriptMarkdown, type ChatChannel } from '../../../client/index.ts';

export type ExportFormat = 'json' | 'markdown';

function fileName(channel: ChatChannel, extension: string): string {
  const info = channel.thread.info;
  const title = info ? chatTitle(info) : 'chat';
  // Letters and digits of any script stay (a title in Greek or Japanese names its file too).
  const slug = title
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '');
  return `${Array.from(slug).slice(0, 60).join('').replace(/-$/, '') || 'chat'}-${channel.chatId.slice(0, 8)}.${extension}`;
}

export async function exportChat(channel: ChatChannel, format: ExportFormat): Promise<void> {
  const thread = channel.thread;
  await thread.loadAll();
  const [body, type, extension] =
    format === 'json' ? [JSON.stringify(transcriptJson(thread), null, 2), 'application/json', 'json'] : [transcriptMarkdown(thread), 'text/markdown', 'md'];
  const url = URL.createObjectURL(new Blob([body], { type: `${type};charset=utf-8` }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName(channel, extension);
  document.body.appendChild(link);
  link.click();
  link.remove();
  // The download has its own copy once the click is handled.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
