// The new chat's folder, picked from what the host allows: its `folders.list` (a Tether addition,
// read-only, every path kept inside the policy's roots by the host) shows recent folders first, then
// the allowed roots, and each folder's subfolders; git repositories are marked. The folder being
// looked at is the one chosen; with nothing chosen the chat works in the host's default folder,
// which is named. A typed path goes through the host the same way, so a refusal names the allowed
// folders before the chat is even made.
import { useEffect, useState } from 'preact/hooks';
import type { FolderEntry, FoldersListResult, HostPolicySummary } from '../../contracts/index.ts';
import { errorText } from '../app/errors.ts';
import { hostConnection } from '../app/session.ts';
import { lastActive } from '../hosts/time.ts';

export interface PickedFolder {
  /** null: the host's default folder. */
  path: string | null;
  /** It holds a `.git` (the worktree option needs one). */
  repository: boolean;
}

export function FolderPicker({ hostId, policy, onPick }: { hostId: string; policy: HostPolicySummary; onPick: (picked: PickedFolder) => void }) {
  const [page, setPage] = useState<FoldersListResult | null>(null);
  const [asked, setAsked] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [typed, setTyped] = useState('');
  const [loading, setLoading] = useState(true);

  useEffect(() => {
    let live = true;
    setLoading(true);
    hostConnection(hostId)
      .request('folders.list', asked === undefined ? {} : { folder: asked })
      .then(
        (result) => {
          if (!live) return;
          setPage(result);
          setError(null);
          setLoading(false);
          onPick({ path: result.folder, repository: result.repository });
        },
        (failure: unknown) => {
          if (!live) return;
          // The page shown stays (and so does the choice): the refusal says which folders are allowed.
          setError(errorText(failure));
          setLoading(false);
        },
      );
    return () => {
      live = false;
    };
  }, [hostId, asked]);

  const open = (folder: string | undefined) => {
    setError(null);
    setAsked(folder);
  };
  const chosen = page?.folder ?? null;

  return (
    <fieldset class="folder-picker card" aria-busy={loading}>
      <legend>Folder on the host</legend>
      <p class="folder-chosen" data-testid="folder-chosen" aria-live="polite">
        {chosen ? (
          <>
            Works in <code>{chosen}</code>
            {page?.repository ? <span class="badge git">git</span> : null}
          </>
        ) : (
          <>
            Works in the host's default folder, <code>{policy.defaultFolder}</code>, unless you open another below.
          </>
        )}
      </p>
      {page && (
        <div class="row folder-nav">
          {page.folder !== null && (
            <button type="button" onClick={() => open(undefined)}>
              All allowed folders
            </button>
          )}
          {page.parent !== null && (
            <button type="button" onClick={() => open(page.parent!)} aria-label={`Up to ${page.parent}`}>
              Up
            </button>
          )}
        </div>
      )}
      {page && page.recent.length > 0 && <FolderList label="Recent folders" entries={page.recent} onOpen={open} />}
      {page && (
        <FolderList
          label={page.folder === null ? 'Allowed folders' : `Folders in ${page.folder}`}
          entries={page.folders}
          onOpen={open}
          empty={page.folder === null ? 'None of the allowed folders exists on the host.' : 'No folders in here.'}
        />
      )}
      {page?.truncated && <p class="muted small">More folders are there than listed; type the path below.</p>}
      {error && (
        <p class="notice error" role="alert" data-testid="folder-error">
          {error}
        </p>
      )}
      {/* Inside the new-chat form, so no form of its own: Enter opens the typed folder, it does not create the chat. */}
      <div class="row folder-typed">
        <label class="grow">
          Or type a folder
          <input
            type="text"
            name="folder-path"
            placeholder={policy.roots[0] ?? policy.defaultFolder}
            value={typed}
            onInput={(e) => setTyped(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                if (typed.trim()) open(typed.trim());
              }
            }}
            autoComplete="off"
            spellcheck={false}
          />
        </label>
        <button type="button" disabled={!typed.trim()} onClick={() => open(typed.trim())}>
          Open
        </button>
      </div>
    </fieldset>
  );
}

function FolderList({ label, entries, onOpen, empty }: { label: string; entries: FolderEntry[]; onOpen: (folder: string) => void; empty?: string }) {
  return (
    <div class="folder-group">
      <h3 class="small muted">{label}</h3>
      {entries.length === 0 && empty ? (
        <p class="muted small">{empty}</p>
      ) : (
        <ul class="list folder-list" aria-label={label}>
          {entries.map((entry) => (
            <li key={`${label}:${entry.path}`}>
              <button type="button" class="folder-row" onClick={() => onOpen(entry.path)} title={entry.path}>
                <span class="folder-name">{entry.root || entry.usedAt !== undefined ? entry.path : entry.name}</span>
                {entry.repository ? <span class="badge git">git</span> : null}
                {entry.usedAt !== undefined ? <span class="muted small">{lastActive(entry.usedAt, Date.now())}</span> : null}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
