// A chat saved as a transcript file: the whole chat (older pages loaded first), as JSON in the
// ChatTranscript shape or as Markdown, handed to the browser as a download.
import { transcriptJson, transcriptMarkdown, type ChatChannel } from '../../../client/index.ts';

export type ExportFormat = 'json' | 'markdown';

function fileName(channel: ChatChannel, extension: string): string {
  const title = channel.thread.info?.suggestedTitle ?? 'chat';
  const slug = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60) || 'chat';
  return `${slug}-${channel.chatId.slice(0, 8)}.${extension}`;
}

export async function exportChat(channel: ChatChannel, format: ExportFormat): Promise<void> {
  const thread = channel.thread;
  await thread.loadAll();
  const [body, type, extension] = format === 'json'
    ? [JSON.stringify(transcriptJson(thread), null, 2), 'application/json', 'json']
    : [transcriptMarkdown(thread), 'text/markdown', 'md'];
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
