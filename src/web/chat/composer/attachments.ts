// Files a person attaches to a message, checked against the contract's limits before anything is
// read (at most 8, at most 10 MiB together), then read as the raw base64 `chat.send` carries.
import { CHAT_ATTACHMENTS_MAX_BYTES, CHAT_ATTACHMENTS_MAX_COUNT, type ChatAttachmentUpload } from '../../../contracts/index.ts';

export interface Attached {
  /** For keys and removal; not sent. */
  key: string;
  file: File;
  /** An object URL for images (revoked when removed or sent). */
  preview: string | null;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * Adds files to what is attached, as many as the limits allow; answers the new list and, when some
 * were left out, why (in words for the person).
 */
export function addFiles(current: readonly Attached[], files: Iterable<File>): { attached: Attached[]; refused: string | null } {
  const attached = [...current];
  let total = attached.reduce((sum, a) => sum + a.file.size, 0);
  const refused: string[] = [];
  for (const file of files) {
    if (attached.length >= CHAT_ATTACHMENTS_MAX_COUNT) {
      refused.push(`${file.name}: at most ${CHAT_ATTACHMENTS_MAX_COUNT} files per message`);
      continue;
    }
    if (file.size === 0) {
      refused.push(`${file.name}: the file is empty`);
      continue;
    }
    if (total + file.size > CHAT_ATTACHMENTS_MAX_BYTES) {
      refused.push(`${file.name}: attachments may total at most ${formatBytes(CHAT_ATTACHMENTS_MAX_BYTES)} per message`);
      continue;
    }
    total += file.size;
    attached.push({ key: crypto.randomUUID(), file, preview: file.type.startsWith('image/') ? URL.createObjectURL(file) : null });
  }
  return { attached, refused: refused.length > 0 ? refused.join('; ') : null };
}

export function releasePreviews(attached: readonly Attached[]): void {
  for (const a of attached) if (a.preview) URL.revokeObjectURL(a.preview);
}

function base64(bytes: Uint8Array): string {
  // In slices: String.fromCharCode with one argument per byte overflows the stack on large files.
  let binary = '';
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(binary);
}

export async function toUploads(attached: readonly Attached[]): Promise<ChatAttachmentUpload[]> {
  return Promise.all(
    attached.map(async ({ file }) => ({
      name: file.name.slice(0, 255) || 'file',
      mime: file.type || 'application/octet-stream',
      data: base64(new Uint8Array(await file.arrayBuffer())),
    })),
  );
}
