// The Codex backend: `codex app-server` per chat (driver.ts), read by a pure mapper (mapper.ts).
// At start it asks one short-lived app-server for its version and model catalog (`model/list`);
// until that answers (or if it fails) the provider offers only the `default` model, which leaves
// the choice to Codex's own config.
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import type { ChatSkill, ChatSubagentItem, ModelInfo, ModelSelection, ProviderInfo } from '../../../contracts/index.ts';
import { ModelSlugSchema } from '../../../contracts/index.ts';
import { ProtocolError } from '../../../contracts/errors.ts';
import { CliProcess } from '../cli-process.ts';
import type {
  AccountLaunch,
  LimitsAnswer,
  Provider,
  SignInState,
  ProviderChatContext,
  ProviderForkRequest,
  ProviderSession,
  SubagentWork,
} from '../provider.ts';
import { CODEX_PROFILE } from './profile.ts';
import { runCli } from '../run-cli.ts';
import { codexArgs, codexEnv, CodexSession, CODEX_THREAD_IDS, DEFAULT_MODEL } from './driver.ts';
import type { CodexLaunch } from './driver.ts';
import { JsonRpcPeer, RpcError } from './rpc.ts';
import { codexLimits } from './mapper.ts';
import { findRollout, subagentRolloutItems } from './subagent-rollout.ts';

const DEFAULT_ENTRY: ModelInfo = { slug: DEFAULT_MODEL, name: 'Codex default (its config)', legacy: false, isDefault: true, options: [] };

/** How long the catalog probe may take before the provider settles for the default entry. */
const PROBE_TIMEOUT_MS = 20_000;

export interface CodexCatalog {
  version: string | null;
  models: ModelInfo[];
}

export class CodexProvider implements Provider {
  readonly kind = 'codex' as const;
  readonly canSteer = true;
  readonly sessionIds = CODEX_THREAD_IDS;
  private readonly launch: CodexLaunch;
  private catalog: CodexCatalog = { version: null, models: [DEFAULT_ENTRY] };
  private installed = true;
  /** Rollouts found, by sessions folder and thread id: a subagent's is looked for once, then read per page. */
  private readonly rollouts = new Map<string, string>();
  /** Resolves once the probe answered or failed. */
  readonly probed: Promise<void>;

  constructor(launch: CodexLaunch, options: { probe?: boolean } = {}) {
    this.launch = launch;
    this.probed = options.probe === false ? Promise.resolve() : this.probe();
  }

  info(): ProviderInfo {
    return {
      kind: 'codex',
      name: CODEX_PROFILE.name,
      installed: this.installed,
      version: this.catalog.version,
      models: this.installed ? this.catalog.models : [],
      defaultModel: this.installed ? DEFAULT_MODEL : null,
      capabilities: CODEX_PROFILE.capabilities,
      resumeCommand: CODEX_PROFILE.resumeCommand,
    };
  }

  normalizeSelection(selection: ModelSelection | undefined): ModelSelection {
    const model = this.catalog.models.find((m) => m.slug === selection?.model) ?? DEFAULT_ENTRY;
    const options: ModelSelection['options'] = {};
    for (const option of model.options) {
      const asked = selection?.options[option.id];
      if (option.type === 'select') options[option.id] = typeof asked === 'string' && option.choices.some((c) => c.id === asked) ? asked : option.defaultChoice;
      else options[option.id] = typeof asked === 'boolean' ? asked : option.defaultValue;
    }
    return { model: model.slug, options };
  }

  open(context: ProviderChatContext): ProviderSession {
    // The model's own effort choices, which a turn's effort must be one of (null: a model the catalog does not know).
    const model = this.catalog.models.find((m) => m.slug === context.selection.model);
    const effort = model?.options.find((o) => o.id === 'effort');
    return new CodexSession(this.launch, context, model ? (effort?.type === 'select' ? effort.choices.map((c) => c.id) : []) : null);
  }

  /** Codex writes every thread to `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (older ones moved to `archived_sessions`). */
  usageRoots(account: AccountLaunch | undefined): string[] {
    const env = codexEnv(this.launch, account?.home, account?.env);
    const home = env.CODEX_HOME || path.join(env.HOME || os.homedir(), '.codex');
    return [path.join(home, 'sessions'), path.join(home, 'archived_sessions')];
  }

  /**
   * A subagent's work from its own thread's rollout: the thread Codex named when it spawned the
   * agent (the row's `native.threadId`), found under the account's `sessions` and read only when
   * its meta names the chat's thread as its parent.
   */
  async subagentItems(agentSessionId: string, subagent: ChatSubagentItem, account: AccountLaunch | undefined): Promise<SubagentWork | null> {
    const threadId = subagent.native?.threadId;
    if (!threadId || !CODEX_THREAD_IDS.test(threadId) || !CODEX_THREAD_IDS.test(agentSessionId)) return null;
    const sessions = this.usageRoots(account)[0]!;
    const key = `${sessions}\0${threadId}`;
    const file = this.rollouts.get(key) ?? (await findRollout(sessions, threadId));
    if (!file) return null;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      this.rollouts.delete(key);
      return null;
    }
    const items = subagentRolloutItems(text, agentSessionId, threadId, subagent.toolUseId);
    if (!items) return null;
    this.rollouts.set(key, file);
    return { items, source: 'codex-thread' };
  }

  /** Asks a short-lived app-server of the account (`account/rateLimits/read`); a ChatGPT sign-in is what has limits. */
  readLimits(account: AccountLaunch | undefined): Promise<LimitsAnswer> {
    return readLimits(this.launch, account);
  }

  /** `codex login status` exits 0 when the account's home holds a sign-in (ChatGPT or an API key) and says which. */
  async checkSignIn(account: AccountLaunch | undefined): Promise<SignInState> {
    const { stdout, stderr, code, failure } = await runCli(
      this.launch.command,
      [...(this.launch.prefixArgs ?? []), 'login', 'status'],
      codexEnv(this.launch, account?.home, account?.env),
    );
    const said = `${stdout}\n${stderr}`
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('WARNING'));
    return { signedIn: code === 0, message: failure ?? said.at(-1) ?? null };
  }

  /** What Codex itself would load (`skills/list` of a short-lived app-server of the account, for the chat's folder). */
  listSkills(cwd: string, account: AccountLaunch | undefined): Promise<ChatSkill[]> {
    return readSkills(this.launch, account, cwd);
  }

  /**
   * A fork at the conversation's last turn continues the same thread id: the runtime opens the fork's
   * driver with `forkSession`, and its first process opens the thread with `thread/fork`, which copies
   * it under a new id. An earlier turn would need Codex's own turn id (`lastTurnId`), which this host
   * does not keep, so it is not offered.
   */
  async fork(request: ProviderForkRequest): Promise<string> {
    if (!request.latest) throw new ProtocolError('chat-unsupported', 'Codex can fork this conversation only at its last turn');
    return request.agentSessionId;
  }

  private async probe(): Promise<void> {
    try {
      this.catalog = await readCatalog(this.launch);
    } catch {
      // No catalog: the default entry stays, and a chat's first turn reports what is wrong.
      this.installed = await canRun(this.launch);
    }
  }
}

/** Asks a short-lived app-server for its version (from `initialize`) and `model/list`. */
export function readCatalog(launch: CodexLaunch): Promise<CodexCatalog> {
  return withAppServer(launch, undefined, 'the catalog probe', async (peer, init) => {
    const list = record(await peer.request('model/list', {}));
    return { version: versionOf(init.userAgent), models: [DEFAULT_ENTRY, ...normalizeModels(list.data)] };
  });
}

/**
 * The skills Codex loads in `cwd` (`skills/list`): repo ones are the project's, user and bundled
 * system ones the user's, a plugin's by its `pluginId`; disabled ones are left out.
 */
export async function readSkills(launch: CodexLaunch, account: AccountLaunch | undefined, cwd: string): Promise<ChatSkill[]> {
  const answer = await askAppServer(launch, account, 'skills/list', { cwds: [cwd] });
  const skills: ChatSkill[] = [];
  for (const entry of Array.isArray(answer.data) ? answer.data : []) {
    for (const raw of Array.isArray(record(entry).skills) ? (record(entry).skills as unknown[]) : []) {
      const skill = record(raw);
      if (typeof skill.name !== 'string' || skill.name === '' || skill.enabled === false) continue;
      const source = typeof skill.pluginId === 'string' && skill.pluginId !== '' ? 'plugin' : skill.scope === 'repo' ? 'project' : 'user';
      skills.push({ name: skill.name, description: typeof skill.description === 'string' ? skill.description : '', source });
    }
  }
  return skills;
}

/** One request to a short-lived app-server of the account's home (initialize, the request, end). */
function askAppServer(launch: CodexLaunch, account: AccountLaunch | undefined, method: string, params: unknown): Promise<Record<string, unknown>> {
  return withAppServer(launch, account, method, async (peer) => record(await peer.request(method, params)));
}

/**
 * A short-lived app-server of the account's home (the launch's own without one), initialized, for
 * `use`; it answers no request of the server's, and ends when `use` settles or `what` times out.
 */
export async function withAppServer<T>(
  launch: CodexLaunch,
  account: AccountLaunch | undefined,
  what: string,
  use: (peer: JsonRpcPeer, init: Record<string, unknown>) => Promise<T>,
): Promise<T> {
  let peer!: JsonRpcPeer;
  const process = new CliProcess({
    command: launch.command,
    args: codexArgs(launch),
    cwd: tmpdir(),
    env: codexEnv(launch, account?.home, account?.env),
    onLine: (line) => peer.receive(line),
    onExit: () => peer.close('Codex exited'),
    stdinGraceMs: 1_000,
  });
  peer = new JsonRpcPeer({
    write: (line) => {
      process.writeLine(line);
    },
    onNotification: () => undefined,
    onRequest: (id) => peer.respondError(id, { code: -32601, message: `This client only asks for ${what}` }),
  });
  const timer = setTimeout(() => peer.close(`${what} timed out`), PROBE_TIMEOUT_MS);
  try {
    const init = record(
      await peer.request('initialize', {
        clientInfo: { name: 'tether', title: 'Tether', version: launch.clientVersion },
        capabilities: { experimentalApi: true },
      }),
    );
    peer.notify('initialized');
    return await use(peer, init);
  } finally {
    clearTimeout(timer);
    await process.end();
  }
}

/**
 * The account's plan limits from a short-lived app-server of its home. Codex answers them only for
 * a ChatGPT sign-in (an API key has none): its refusal is `no-subscription` with Codex's words.
 */
export async function readLimits(launch: CodexLaunch, account: AccountLaunch | undefined): Promise<LimitsAnswer> {
  try {
    const answer = await askAppServer(launch, account, 'account/rateLimits/read', {});
    const limits = codexLimits(record(answer.rateLimits));
    return { ok: true, reading: limits ? { windows: limits.windows, ...(limits.plan !== undefined ? { plan: limits.plan } : {}) } : { windows: [] } };
  } catch (error) {
    if (error instanceof RpcError) return { ok: false, reason: 'no-subscription', message: error.message };
    return { ok: false, reason: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
}

/** Codex's `model/list` entries as the contract's ModelInfo; hidden or unusable slugs are left out. */
export function normalizeModels(data: unknown): ModelInfo[] {
  if (!Array.isArray(data)) return [];
  const out: ModelInfo[] = [];
  for (const raw of data) {
    const entry = record(raw);
    const slug = entry.model ?? entry.id;
    if (entry.hidden === true || !ModelSlugSchema.safeParse(slug).success || slug === DEFAULT_MODEL) continue;
    const efforts = (Array.isArray(entry.supportedReasoningEfforts) ? entry.supportedReasoningEfforts : [])
      .map((e) => record(e))
      .filter((e) => typeof e.reasoningEffort === 'string')
      .map((e) => ({
        id: e.reasoningEffort as string,
        label: capitalize(e.reasoningEffort as string),
        ...(typeof e.description === 'string' ? { description: e.description } : {}),
      }));
    const fallback = typeof entry.defaultReasoningEffort === 'string' ? entry.defaultReasoningEffort : efforts[0]?.id;
    out.push({
      slug: slug as string,
      name: typeof entry.displayName === 'string' && entry.displayName ? entry.displayName : (slug as string),
      legacy: entry.upgrade !== null && entry.upgrade !== undefined,
      // The `default` entry is the default: it follows the person's own Codex config.
      isDefault: false,
      options: efforts.length && fallback ? [{ id: 'effort', label: 'Reasoning effort', type: 'select', choices: efforts, defaultChoice: fallback }] : [],
    });
  }
  return out;
}

async function canRun(launch: CodexLaunch): Promise<boolean> {
  const process = new CliProcess({
    command: launch.command,
    args: [...(launch.prefixArgs ?? []), '--version'],
    cwd: globalThis.process.cwd(),
    env: codexEnv(launch),
    onLine: () => undefined,
  });
  const exit = await process.exited;
  return !exit.error && exit.code === 0;
}

function versionOf(userAgent: unknown): string | null {
  const match = typeof userAgent === 'string' ? /\/(\d+\.\d+\.\d+[^\s]*)/.exec(userAgent) : null;
  return match?.[1] ?? null;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
