// A new chat: which host, which agent (provider), model and model options from the host's own
// catalog (`provider.list`), the folder it works in and how much it may do unasked (runtime mode).
// The host's policy comes with the catalog: the folders it allows, its default folder and the widest
// mode, shown here and used to offer only what the host will accept (it checks again anyway). The
// folder is picked from the host's own listing of what it allows (FolderPicker, `folders.list`).
// Made with `chat.create` on the host's lobby, then opened.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { MODE_ORDER, type HostPolicySummary, type ModelInfo, type ModelOptionDescriptor, type ProviderInfo, type RuntimeMode } from '../../contracts/index.ts';
import { errorText } from '../app/errors.ts';
import { navigate } from '../app/router.ts';
import { hostConnection } from '../app/session.ts';
import { hosts, hostsError, isOnline, loadHosts } from '../hosts/host-list.ts';
import { chatCreated } from './chat-index.ts';
import { FolderPicker, type PickedFolder } from './FolderPicker.tsx';
import { WorktreeOption, worktreeChoiceProblem, type WorktreeChoice } from './WorktreeOption.tsx';
import './chats.css';

const MODES: Record<RuntimeMode, string> = {
  supervised: 'Supervised: asks before edits and commands',
  'auto-accept-edits': 'Accept edits: asks before commands',
  auto: 'Auto: asks only for risky actions',
  'full-access': 'Full access: never asks',
};

type Options = Record<string, string | boolean>;

function defaultsOf(model: ModelInfo | undefined): Options {
  const options: Options = {};
  for (const option of model?.options ?? []) options[option.id] = option.type === 'select' ? option.defaultChoice : option.defaultValue;
  return options;
}

export function NewChatPage({ query }: { query: URLSearchParams }) {
  useEffect(() => {
    void loadHosts();
  }, []);
  const usable = (hosts.value ?? []).filter((h) => h.role === 'owner' || h.role === 'operator');
  const [hostId, setHostId] = useState(query.get('host') ?? '');
  const chosenHost = usable.find((h) => h.id === hostId) ?? usable.find(isOnline) ?? usable[0];
  const [catalog, setCatalog] = useState<{ hostId: string; providers: ProviderInfo[]; policy?: HostPolicySummary } | null>(null);
  const [catalogError, setCatalogError] = useState<string | null>(null);
  const [kind, setKind] = useState('');
  const [modelSlug, setModelSlug] = useState('');
  const [options, setOptions] = useState<Options>({});
  const [folder, setFolder] = useState<PickedFolder>({ path: null, repository: false });
  const [worktree, setWorktree] = useState<WorktreeChoice>({ on: false, branch: '' });
  // Only a repository's folder can have a worktree made from it.
  const inWorktree = worktree.on && folder.repository && folder.path !== null;
  const [mode, setMode] = useState<RuntimeMode>('supervised');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const online = chosenHost ? isOnline(chosenHost) : false;
  useEffect(() => {
    if (!chosenHost || !online) return;
    let live = true;
    setCatalogError(null);
    hostConnection(chosenHost.id)
      .request('provider.list', {})
      .then(
        ({ providers, policy }) => {
          if (!live) return;
          setCatalog({
            hostId: chosenHost.id,
            providers: providers.filter((p) => p.installed && p.capabilities.chat && p.models.length > 0),
            ...(policy ? { policy } : {}),
          });
          if (policy) setMode(policy.defaultMode);
        },
        (failure: unknown) => {
          if (live) setCatalogError(errorText(failure));
        },
      );
    return () => {
      live = false;
    };
  }, [chosenHost?.id, online]);

  const providers = catalog && catalog.hostId === chosenHost?.id ? catalog.providers : null;
  const policy = catalog && catalog.hostId === chosenHost?.id ? catalog.policy : undefined;
  const allowed = (m: RuntimeMode) => !policy || MODE_ORDER.indexOf(m) <= MODE_ORDER.indexOf(policy.modeCeiling);
  const provider = providers?.find((p) => p.kind === kind) ?? providers?.[0];
  const model = useMemo(
    () =>
      provider?.models.find((m) => m.slug === modelSlug) ??
      provider?.models.find((m) => m.slug === provider.defaultModel) ??
      provider?.models.find((m) => m.isDefault) ??
      provider?.models[0],
    [provider, modelSlug],
  );
  // A new model brings its own options: start from its defaults.
  useEffect(() => {
    setOptions(defaultsOf(model));
  }, [model?.slug, provider?.kind]);

  const create = async (event: Event) => {
    event.preventDefault();
    if (!chosenHost || !provider || !model) return;
    setBusy(true);
    setError(null);
    try {
      const chatId = crypto.randomUUID();
      const info = await hostConnection(chosenHost.id).request('chat.create', {
        chatId,
        provider: provider.kind,
        selection: { model: model.slug, options },
        runtimeMode: mode,
        ...(folder.path ? { cwd: folder.path } : {}),
        ...(inWorktree ? { worktree: worktree.branch.trim() ? { branch: worktree.branch.trim() } : {} } : {}),
      });
      chatCreated(chosenHost.id, info);
      navigate(`/hosts/${encodeURIComponent(chosenHost.id)}/chats/${encodeURIComponent(info.chatId)}`);
    } catch (failure) {
      setError(errorText(failure));
      setBusy(false);
    }
  };

  return (
    <section class="page" aria-labelledby="new-chat-title">
      <h1 id="new-chat-title">New chat</h1>
      {hostsError.value && (
        <p class="notice error" role="alert">
          {hostsError.value}
        </p>
      )}
      {hosts.value && usable.length === 0 && (
        <p class="notice">
          You have no host you may start chats on. <a href="/hosts">Pair a host</a> or ask its owner for the operator role.
        </p>
      )}
      {chosenHost && (
        <form class="card stack" onSubmit={create}>
          <label>
            Host
            <select
              name="host"
              value={chosenHost.id}
              onChange={(e) => {
                setHostId(e.currentTarget.value);
                setKind('');
                setModelSlug('');
              }}
            >
              {usable.map((h) => (
                <option key={h.id} value={h.id}>
                  {h.name}
                  {isOnline(h) ? '' : ' (offline)'}
                </option>
              ))}
            </select>
          </label>
          {!online && (
            <p class="notice" role="status">
              This host is offline: a chat can be made once it is back.
            </p>
          )}
          {online && !providers && !catalogError && (
            <p class="loading" aria-busy="true">
              Reading the host's agents…
            </p>
          )}
          {catalogError && (
            <p class="notice error" role="alert">
              {catalogError}
            </p>
          )}
          {providers && providers.length === 0 && <p class="notice">No agent CLI that can chat is installed on this host.</p>}
          {provider && model && (
            <>
              <label>
                Agent
                <select
                  name="provider"
                  value={provider.kind}
                  onChange={(e) => {
                    setKind(e.currentTarget.value);
                    setModelSlug('');
                  }}
                >
                  {providers!.map((p) => (
                    <option key={p.kind} value={p.kind}>
                      {p.name}
                      {p.version ? ` ${p.version}` : ''}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Model
                <select name="model" value={model.slug} onChange={(e) => setModelSlug(e.currentTarget.value)}>
                  {provider.models.map((m) => (
                    <option key={m.slug} value={m.slug}>
                      {m.name}
                      {m.badge ? ` (${m.badge})` : ''}
                      {m.legacy ? ' (legacy)' : ''}
                    </option>
                  ))}
                </select>
              </label>
              {model.options.length > 0 && (
                <fieldset class="model-options card">
                  <legend>Model options</legend>
                  {model.options.map((option) => (
                    <ModelOption
                      key={option.id}
                      option={option}
                      value={options[option.id]}
                      onChange={(value) => setOptions({ ...options, [option.id]: value })}
                    />
                  ))}
                </fieldset>
              )}
              {policy ? (
                <FolderPicker key={chosenHost.id} hostId={chosenHost.id} policy={policy} onPick={setFolder} />
              ) : (
                <p class="muted small">This host is older than the folder picker: the chat works in its default folder.</p>
              )}
              {folder.repository && folder.path && <WorktreeOption choice={worktree} onChange={setWorktree} repository={folder.path} />}
              {policy && (
                <p class="muted small" data-testid="host-policy">
                  This host allows chats in {policy.roots.join(', ')}, up to {MODES[policy.modeCeiling].split(':')[0].toLowerCase()}.
                </p>
              )}
              <label>
                Runtime mode
                <select name="runtime-mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as RuntimeMode)}>
                  {MODE_ORDER.map((m) => (
                    <option key={m} value={m} disabled={!allowed(m)}>
                      {MODES[m]}
                      {allowed(m) ? '' : ' (not allowed on this host)'}
                    </option>
                  ))}
                </select>
              </label>
              <button type="submit" class="primary" disabled={busy || (inWorktree && worktreeChoiceProblem(worktree) !== null)}>
                {busy ? 'Creating…' : 'Create chat'}
              </button>
            </>
          )}
          {error && (
            <p class="notice error" role="alert">
              {error}
            </p>
          )}
        </form>
      )}
    </section>
  );
}

function ModelOption({
  option,
  value,
  onChange,
}: {
  option: ModelOptionDescriptor;
  value: string | boolean | undefined;
  onChange: (value: string | boolean) => void;
}) {
  if (option.type === 'boolean') {
    return (
      <label class="inline">
        <input type="checkbox" checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />
        {option.label}
        {option.description && <span class="muted small">{option.description}</span>}
      </label>
    );
  }
  return (
    <label>
      {option.label}
      <select value={String(value ?? option.defaultChoice)} onChange={(e) => onChange(e.currentTarget.value)}>
        {option.choices.map((c) => (
          <option key={c.id} value={c.id}>
            {c.label}
          </option>
        ))}
      </select>
    </label>
  );
}
