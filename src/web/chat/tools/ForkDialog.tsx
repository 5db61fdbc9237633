// Fork the chat after one of its turns: a new chat with the history up to and including that turn,
// on the same CLI (which continues its own conversation) or another one (which gets it as text).
// `chat.forkInfo` says first whether the folder is a repository; in one, the fork may start in a new
// git worktree on a new branch (the host's suggestion prefilled), else it works in the same folder,
// and the dialog says so. Done, it opens the new chat.
import { useEffect, useId, useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';
import { CHAT_FORK_TITLE_MAX, type AgentKind, type ChatForkInfoResult } from '../../../contracts/index.ts';
import { navigate } from '../../app/router.ts';
import { useAction } from './action.ts';
import { hostProviders } from './capabilities.ts';
import { Dialog } from './Dialog.tsx';
import { WorktreeOption, worktreeChoiceProblem, type WorktreeChoice } from '../../chats/WorktreeOption.tsx';

export function ForkDialog({ channel, turnId, onClose }: { channel: ChatChannel; turnId: string; onClose(): void }) {
  const load = useAction();
  const fork = useAction();
  const [facts, setFacts] = useState<ChatForkInfoResult | null>(null);
  const [title, setTitle] = useState('');
  const info = channel.thread.info;
  const [provider, setProvider] = useState<AgentKind | undefined>(info?.provider);
  const [worktree, setWorktree] = useState<WorktreeChoice>({ on: false, branch: '' });
  const inWorktree = worktree.on && facts?.repository === true;
  const titleId = useId();
  const providerId = useId();
  const providers = (hostProviders(channel.hostId) ?? []).filter((p) => p.installed && p.capabilities.chat);

  // biome-ignore lint/correctness/useExhaustiveDependencies: asked once per turn; `load` is stable
  useEffect(() => {
    void load
      .run('info', () => channel.request('chat.forkInfo', { chatId: channel.chatId, turnId }))
      .then((result) => {
        if (!result) return;
        setFacts(result);
        if (result.branch) setWorktree((w) => ({ ...w, branch: w.branch || result.branch! }));
      });
  }, [channel, turnId]);

  const submit = async (event: Event) => {
    event.preventDefault();
    const result = await fork.run('fork', () =>
      channel.request('chat.fork', {
        chatId: channel.chatId,
        turnId,
        ...(title.trim() ? { title: title.trim() } : {}),
        ...(provider && provider !== info?.provider ? { provider } : {}),
        ...(inWorktree ? { worktree: worktree.branch.trim() ? { branch: worktree.branch.trim() } : {} } : {}),
      }),
    );
    if (!result) return;
    onClose();
    navigate(`/hosts/${encodeURIComponent(channel.hostId)}/chats/${encodeURIComponent(result.info.chatId)}`);
  };

  return (
    <Dialog title="Fork this chat" onClose={onClose} className="fork-dialog">
      <form class="stack" onSubmit={submit}>
        <p class="muted small">A new chat that starts with this conversation up to and including this turn. This chat stays as it is.</p>
        {load.busy ? (
          <p class="muted" role="status">
            Reading the folder…
          </p>
        ) : null}
        {load.error ? (
          <p class="request-error" role="alert">
            {load.error}
          </p>
        ) : null}
        {facts ? (
          <p class="small">
            {facts.repository
              ? inWorktree
                ? "The fork works in a new worktree; it gets this conversation as text, and its files are the repository's current commit."
                : `The fork works in the same folder${facts.branches.length ? ` (a git repository, ${facts.branches.length} branch${facts.branches.length === 1 ? '' : 'es'})` : ''}; its files are the folder's as they are now.`
              : "The fork works in the same folder (not a git repository); its files are the folder's as they are now."}
          </p>
        ) : null}
        {facts?.repository && info ? <WorktreeOption choice={worktree} onChange={setWorktree} repository={info.cwd} /> : null}
        <label for={titleId}>Title (optional)</label>
        <input id={titleId} type="text" maxLength={CHAT_FORK_TITLE_MAX} value={title} onInput={(event) => setTitle(event.currentTarget.value)} />
        {providers.length > 1 ? (
          <>
            <label for={providerId}>Agent</label>
            <select id={providerId} value={provider} onChange={(event) => setProvider(event.currentTarget.value as AgentKind)}>
              {providers.map((p) => (
                <option key={p.kind} value={p.kind}>
                  {p.name}
                  {p.kind === info?.provider ? ' (this chat’s)' : ''}
                </option>
              ))}
            </select>
          </>
        ) : null}
        {fork.error ? (
          <p class="request-error" role="alert">
            {fork.error}
          </p>
        ) : null}
        <div class="request-actions">
          <button type="submit" class="primary" disabled={fork.busy !== null || load.busy !== null || (inWorktree && worktreeChoiceProblem(worktree) !== null)}>
            {fork.busy ? 'Forking…' : 'Fork'}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
