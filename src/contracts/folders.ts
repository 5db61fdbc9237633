// Tether addition (not in agent-contracts): `folders.list`, the host's folders a new chat may work
// in, for the new-chat folder picker. Read-only, and only ever inside the host's policy roots: the
// host resolves every path it is asked about (symlinks and `..` included) and refuses, with
// `folder-denied` naming the allowed folders, anything whose real path is outside them.
import { z } from 'zod';

/** Folders one answer lists at most; a bigger folder answers `truncated` (type the path instead). */
export const FOLDER_LIST_MAX = 200;
/** Directory entries a host reads from one folder at most before it stops (a huge folder stays cheap). */
export const FOLDER_SCAN_MAX = 5_000;
/** Recent folders (where this host's chats worked) on the top page at most. */
export const FOLDER_RECENT_MAX = 12;

export const FoldersListPayloadSchema = z.object({
  // A folder inside the roots (absolute or under ~); absent: the top page (recent folders and the roots).
  folder: z.string().min(1).max(4096).optional(),
});
export type FoldersListPayload = z.output<typeof FoldersListPayloadSchema>;

export const FolderEntrySchema = z.object({
  // Resolved (real) path on the host; what `chat.create`'s `cwd` takes.
  path: z.string(),
  name: z.string(),
  // It holds a `.git` (a repository's top, or a worktree of one).
  repository: z.boolean(),
  // When a chat of this host last worked there (recent folders only).
  usedAt: z.number().optional(),
  // One of the policy's roots.
  root: z.boolean().optional(),
});
export type FolderEntry = z.output<typeof FolderEntrySchema>;

export const FoldersListResultSchema = z.object({
  // The folder listed, resolved; null on the top page.
  folder: z.string().nullable(),
  // The folder above it while that is still inside a root; null at a root and on the top page.
  parent: z.string().nullable(),
  // The listed folder itself holds a `.git` (false on the top page).
  repository: z.boolean(),
  // Top page only: where this host's chats worked, most recent first.
  recent: z.array(FolderEntrySchema).max(FOLDER_RECENT_MAX),
  // The folders in it by name (the roots on the top page); hidden folders are left out.
  folders: z.array(FolderEntrySchema).max(FOLDER_LIST_MAX),
  // More folders than listed (or more entries than a host reads) were there.
  truncated: z.boolean(),
});
export type FoldersListResult = z.output<typeof FoldersListResultSchema>;
