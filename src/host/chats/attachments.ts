// The attachment store: what `chat.send` uploads become before anything else sees them. Each upload
// is decoded once and written under the chat's attachment folder by its content hash (the same image
// sent twice is one file), so threads and queues carry paths, never bytes. A turn's backend gets the
// paths and mime types, and for images also the bytes (base64), read when the turn starts, so a
// driver can hand them to its CLI as image input.
import { createHash, randomBytes } from 'node:crypto';
import { access, copyFile, mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ATTACHMENT_FILE_NAME, CHAT_ATTACHMENT_MAX_BYTES, ProtocolError, attachmentImageMime } from '../../contracts/index.ts';
import type { ChatAttachment, ChatAttachmentUploads, ChatItem } from '../../contracts/index.ts';
import { replaceFile } from '../disk.ts';
import type { TurnImage } from '../providers/provider.ts';
import type { ChatStore } from './store.ts';

/** What one chat keeps of its uploads on the host's disk; past it the oldest go (and the chat is told). */
export interface AttachmentLimits {
  files: number;
  bytes: number;
}

export const DEFAULT_ATTACHMENT_LIMITS: AttachmentLimits = { files: 200, bytes: 256 * 1024 * 1024 };

export class AttachmentStore {
  private readonly store: ChatStore;
  readonly limits: AttachmentLimits;
  /** Writes under way by file: the same bytes sent twice at once are written once. */
  private readonly writing = new Map<string, Promise<void>>();

  constructor(store: ChatStore, limits: AttachmentLimits = DEFAULT_ATTACHMENT_LIMITS) {
    this.store = store;
    this.limits = limits;
  }

  /**
   * Keeps a chat's uploads within the limits: the oldest files go first, never one in `keep` (the
   * message being sent, the queued ones). Visual pages are not uploads and stay. Answers what went.
   */
  async prune(chatId: string, keep: ReadonlySet<string>): Promise<{ files: number; bytes: number }> {
    const dir = this.store.attachmentDir(chatId);
    let names: string[];
    try {
      names = (await readdir(dir)).filter((name) => ATTACHMENT_FILE_NAME.test(name));
    } catch {
      return { files: 0, bytes: 0 };
    }
    if (names.length === 0) return { files: 0, bytes: 0 };
    const files = (
      await Promise.all(
        names.map(async (name) => {
          const file = path.join(dir, name);
          try {
            const info = await stat(file);
            return { file, size: info.size, at: info.mtimeMs };
          } catch {
            return null;
          }
        }),
      )
    )
      .filter((f) => f !== null)
      .sort((a, b) => a.at - b.at);
    let count = files.length;
    let bytes = files.reduce((sum, f) => sum + f.size, 0);
    const dropped = { files: 0, bytes: 0 };
    for (const f of files) {
      if (count <= this.limits.files && bytes <= this.limits.bytes) break;
      if (keep.has(f.file)) continue;
      await rm(f.file, { force: true });
      count -= 1;
      bytes -= f.size;
      dropped.files += 1;
      dropped.bytes += f.size;
    }
    return dropped;
  }

  /** Decodes and stores uploads (already checked against the uploads schema); answers them as stored. */
  async save(chatId: string, uploads: ChatAttachmentUploads): Promise<ChatAttachment[]> {
    if (uploads.length === 0) return [];
    const dir = this.store.attachmentDir(chatId);
    await mkdir(dir, { recursive: true });
    return Promise.all(
      uploads.map(async (upload): Promise<ChatAttachment> => {
        const bytes = Buffer.from(upload.data, 'base64');
        const file = path.join(dir, `${createHash('sha256').update(bytes).digest('hex').slice(0, 40)}${extensionOf(upload.name)}`);
        await this.writeOnce(file, bytes);
        return { id: `att-${randomBytes(9).toString('base64url')}`, name: upload.name, mime: upload.mime, size: bytes.length, path: file };
      }),
    );
  }

  /**
   * The bytes of one stored upload of `chatId`, by its file name (content hash and extension), for the
   * relay's attachment route. Only names the store writes are read, only from the chat's own folder:
   * no other file on this machine can be asked for this way.
   */
  async read(chatId: string, file: string): Promise<Buffer> {
    if (!ATTACHMENT_FILE_NAME.test(file)) throw new ProtocolError('bad-request', 'An attachment file is its content hash and extension');
    const full = path.join(this.store.attachmentDir(chatId), file);
    let size: number;
    try {
      size = (await stat(full)).size;
    } catch {
      throw new ProtocolError('item-not-found', 'This attachment is no longer on the host');
    }
    // Uploads are at most this large; anything bigger is not one of them and would not fit the link.
    if (size > CHAT_ATTACHMENT_MAX_BYTES) throw new ProtocolError('frame-too-large', 'This file is larger than an attachment may be');
    return readFile(full);
  }

  private writeOnce(file: string, bytes: Buffer): Promise<void> {
    let pending = this.writing.get(file);
    if (!pending) {
      // Written whole or not at all, so a file already there is always complete and can be reused.
      pending = exists(file)
        .then((there) => (there ? undefined : replaceFile(file, bytes)))
        .finally(() => this.writing.delete(file));
      this.writing.set(file, pending);
    }
    return pending;
  }

  /**
   * Copies a chat's files (uploads and visual pages) to another chat (a fork) and answers `items`
   * with the attachment paths moved to the copies: the fork keeps its files when the original is
   * cleared or killed.
   */
  async copy(fromChatId: string, toChatId: string, items: ChatItem[]): Promise<ChatItem[]> {
    const from = this.store.attachmentDir(fromChatId);
    const to = this.store.attachmentDir(toChatId);
    let names: string[];
    try {
      names = await readdir(from);
    } catch {
      return items; // nothing stored
    }
    await mkdir(to, { recursive: true });
    await Promise.all(names.filter((name) => !name.endsWith('.tmp')).map((name) => copyFile(path.join(from, name), path.join(to, name))));
    const moved = (attachment: ChatAttachment): ChatAttachment =>
      path.dirname(attachment.path) === from ? { ...attachment, path: path.join(to, path.basename(attachment.path)) } : attachment;
    return items.map((item) => (item.kind === 'user' && item.attachments?.length ? { ...item, attachments: item.attachments.map(moved) } : item));
  }
}

/** The images among `attachments`, with their bytes, for a backend that takes images inline. Unreadable files are left out. */
export function turnImages(attachments: readonly ChatAttachment[]): TurnImage[] {
  const out: TurnImage[] = [];
  for (const attachment of attachments) {
    const mime = attachmentImageMime(attachment);
    if (!mime) continue;
    try {
      out.push({ attachmentId: attachment.id, path: attachment.path, mime, data: readFileSync(attachment.path).toString('base64') });
    } catch {
      // removed since (a clear): the backend still gets the path and can say it is gone
    }
  }
  return out;
}

/** A short, safe extension from the upload's name (the CLI may judge a file by it). */
function extensionOf(name: string): string {
  const match = /\.([A-Za-z0-9]{1,10})$/.exec(name);
  return match ? `.${match[1].toLowerCase()}` : '';
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
