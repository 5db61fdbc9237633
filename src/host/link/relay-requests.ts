// What the relay asks over the link: the agent-contracts requests, served by the runtime as for any
// client, and Tether's own few (src/contracts/link.ts), answered here. Today that is one: the bytes of
// a stored attachment, which the relay serves on its attachment route to the people of the chat.
import { AttachmentReadPayloadSchema, LINK_ATTACHMENT_READ, toWireError, type AttachmentReadResult } from '../../contracts/index.ts';
import type { HostCore, ReplyFrame } from '../chats/core.ts';

/** Serves one frame from the relay as `clientId`; answers the reply frame. Never throws. */
export async function serveRelayFrame(core: HostCore, frame: unknown, clientId: string): Promise<ReplyFrame> {
  const request = frame as { id?: unknown; type?: unknown; payload?: unknown } | null;
  if (typeof request !== 'object' || request === null || request.type !== LINK_ATTACHMENT_READ || typeof request.id !== 'string') {
    return core.serve(frame, clientId);
  }
  const { id } = request;
  const payload = AttachmentReadPayloadSchema.safeParse(request.payload);
  if (!payload.success)
    return { id, ok: false, error: { code: 'bad-request', message: payload.error.issues[0]?.message ?? 'Invalid attachment.read payload' } };
  try {
    core.session(payload.data.chatId); // chat-not-found for a chat this host does not have
    const bytes = await core.attachments.read(payload.data.chatId, payload.data.file);
    const result: AttachmentReadResult = { data: bytes.toString('base64') };
    return { id, ok: true, result };
  } catch (error) {
    return { id, ok: false, error: toWireError(error) };
  }
}
