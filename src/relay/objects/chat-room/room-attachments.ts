// A chat's attachments for the relay's attachment route (http/attachments.ts). The bytes stay on the
// host: the room finds the attachment in its own thread (so only what this chat's messages carry can
// be asked for, whatever id a URL names) and asks the host for that file over the link with
// `attachment.read`, naming it by its content-hash file name alone.
import {
  AttachmentReadResultSchema,
  LINK_ATTACHMENT_READ,
  ProtocolError,
  attachmentFileName,
  generatedImageAttachment,
  type ChatAttachment,
  type ChatItem,
  type Reply,
  type WireError,
} from '../../../contracts/index.ts';
import type { LinkRequestInput } from '../host-link.ts';

export interface AttachmentBytes {
  name: string;
  mime: string;
  bytes: Uint8Array<ArrayBuffer>;
}

/** What the room answers the route: the file, or why not (a value: an error crossing RPC loses its code). */
export type AttachmentAnswer = AttachmentBytes | { error: WireError };

/** The attachment `id` among the thread's user messages and generated images, or null. */
export function findAttachment(items: readonly ChatItem[], id: string): ChatAttachment | null {
  for (const item of items) {
    if (item.kind === 'user') {
      const found = item.attachments?.find((attachment) => attachment.id === id);
      if (found) return found;
    } else if (item.kind === 'tool') {
      const image = generatedImageAttachment(item);
      if (image?.id === id) return image;
    }
  }
  return null;
}

/** The bytes of attachment `id` of this chat, asked of the host. */
export async function readAttachment(
  ask: (input: LinkRequestInput) => Promise<Reply>,
  chatId: string,
  items: readonly ChatItem[],
  id: string,
): Promise<AttachmentAnswer> {
  const attachment = findAttachment(items, id);
  const file = attachment ? attachmentFileName(attachment.path) : null;
  if (!attachment || !file) return { error: { code: 'item-not-found', message: 'This chat has no such attachment' } };
  const reply = await ask({ type: LINK_ATTACHMENT_READ, payload: { chatId, file } });
  if (!reply.ok) return { error: reply.error };
  const result = AttachmentReadResultSchema.safeParse(reply.result);
  if (!result.success) return { error: new ProtocolError('internal', 'The host answered attachment.read with an unreadable result').toWire() };
  return { name: attachment.name, mime: attachment.mime, bytes: decodeBase64(result.data.data) };
}

function decodeBase64(data: string): Uint8Array<ArrayBuffer> {
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
