// The host's provider accounts: a real, minimal snapshot. Every configured provider has its default
// account (id = the kind); more can be created and saved. Records live in `providers.json`
// `{version: 1, accounts}` without secrets: this host has no keychain, so a sensitive variable is
// never stored or sent (`value: ''`, `valueRedacted: true`), and saving a new secret value is refused
// with `secrets-unavailable`.
//
// An account is the machine's configuration, not the client's: what it hands a CLI (variables, a
// config folder) must be allowed by the host policy (policy.ts) when it is saved, and again each
// time a CLI is started with it, so a file written before the policy (or by hand) cannot slip by.
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ProviderAccountMapSchema } from '../../contracts/index.ts';
import type { AgentKind, ProviderAccount, ProviderAccountMap, ProviderAccounts, ProviderAccountStatus } from '../../contracts/index.ts';
import { ProtocolError } from '../../contracts/errors.ts';
import { replaceFile } from '../disk.ts';
import type { HostPolicy } from '../policy.ts';

/** What a person runs in a terminal to sign a CLI in (with the account's folder variable for another account). */
const LOGIN_COMMANDS: Partial<Record<AgentKind, string>> = { claude: 'claude auth login', codex: 'codex login' };

const AccountsFileSchema = z.object({ version: z.literal(1), accounts: ProviderAccountMapSchema });

export class AccountBook {
  private readonly file: string;
  private readonly dataDir: string;
  private readonly kinds: readonly AgentKind[];
  private readonly policy: HostPolicy;
  private accounts: ProviderAccountMap = {};
  private checkedAt = Date.now();
  /** What each account's CLI last said of its sign-in (accounts.watchLogin), by account id. */
  private readonly signIns = new Map<
    string,
    { state: 'ready' | 'signed-out'; email: string | null; plan: string | null; message: string | null; checkedAt: number }
  >();
  private chain: Promise<unknown> = Promise.resolve();

  /** `kinds`: the providers this host has, in config order. */
  constructor(dataDir: string, kinds: readonly AgentKind[], policy: HostPolicy) {
    mkdirSync(dataDir, { recursive: true });
    this.dataDir = path.resolve(dataDir);
    this.file = path.join(dataDir, 'providers.json');
    this.kinds = kinds;
    this.policy = policy;
    try {
      const parsed = AccountsFileSchema.safeParse(JSON.parse(readFileSync(this.file, 'utf8')));
      if (parsed.success) this.accounts = parsed.data.accounts;
    } catch {
      // none saved yet
    }
  }

  /** Whether `id` names an enabled account of `kind` (the kind itself is its default account). */
  has(kind: AgentKind, id: string): boolean {
    if (id === kind) return this.kinds.includes(kind);
    const account = this.accounts[id];
    return account !== undefined && account.kind === kind && account.enabled !== false;
  }

  /**
   * What a CLI of this account starts with: its config folder (`~` expanded) and its plain variables.
   * Sensitive variables have no value here (this host keeps no secrets), so none is passed on.
   * The default account (id = kind) starts with the provider's own settings: undefined.
   * Checked against the policy every time (`invalid-account` naming what it refuses).
   */
  launchSettings(kind: AgentKind, id: string): { home?: string; env?: Record<string, string> } | undefined {
    if (id === kind || !this.has(kind, id)) return undefined;
    const account = this.accounts[id]!;
    this.admit(id, account);
    const env: Record<string, string> = {};
    for (const variable of account.env ?? []) if (!variable.sensitive) env[variable.name] = variable.value;
    return {
      ...(account.home ? { home: this.policy.admitAccountHome(account.home, 'home', [this.dataDir]) } : {}),
      ...(Object.keys(env).length > 0 ? { env } : {}),
    };
  }

  /** Refuses (`invalid-account`) an account whose variables or config folders the policy does not allow. */
  private admit(id: string, account: ProviderAccount): void {
    try {
      for (const variable of account.env ?? []) this.policy.admitVariable(variable.name, variable.value);
      if (account.home !== undefined) this.policy.admitAccountHome(account.home, 'home', [this.dataDir]);
      if (account.shadowHome !== undefined) this.policy.admitAccountHome(account.shadowHome, 'shadowHome', [this.dataDir]);
    } catch (error) {
      if (error instanceof ProtocolError) throw new ProtocolError(error.code, `Account ${id}: ${error.message}`);
      throw error;
    }
  }

  /**
   * The config folders of this kind's enabled accounts other than its default, each as the policy
   * admits it (`policy.accountHomes`); one the policy refuses is left out (`refused` says which).
   */
  homesOf(kind: AgentKind, refused: (id: string, message: string) => void = () => undefined): { id: string; home: string }[] {
    // Asked per terminal hook: judged once per saved set of accounts (the policy resolves symlinks on disk).
    const cached = this.homesCache.get(kind);
    if (cached && cached.of === this.accounts) return cached.homes;
    const out: { id: string; home: string }[] = [];
    for (const [id, account] of Object.entries(this.accounts)) {
      if (id === kind || account.kind !== kind || account.enabled === false || account.home === undefined) continue;
      try {
        out.push({ id, home: this.policy.admitAccountHome(account.home, 'home', [this.dataDir]) });
      } catch (error) {
        refused(id, error instanceof Error ? error.message : String(error));
      }
    }
    this.homesCache.set(kind, { of: this.accounts, homes: out });
    return out;
  }
  private readonly homesCache = new Map<AgentKind, { of: ProviderAccountMap; homes: { id: string; home: string }[] }>();

  snapshot(): ProviderAccounts {
    const accounts: ProviderAccountMap = {};
    for (const kind of this.kinds) accounts[kind] = { ...(this.accounts[kind] ?? {}), kind };
    for (const [id, account] of Object.entries(this.accounts)) accounts[id] ??= account;
    const statuses: ProviderAccountStatus[] = [];
    for (const [id, account] of Object.entries(accounts)) {
      accounts[id] = redact(account);
      const known = (this.kinds as readonly string[]).includes(account.kind);
      const signIn = known && account.enabled !== false ? this.signIns.get(id) : undefined;
      statuses.push({
        id,
        kind: account.kind,
        state: account.enabled === false ? 'disabled' : known ? (signIn?.state ?? 'ready') : 'unavailable',
        email: signIn?.email ?? null,
        plan: signIn?.plan ?? null,
        organization: null,
        home: account.home ?? '',
        message: known ? (signIn?.message ?? null) : `This host has no ${account.kind} provider`,
        checkedAt: signIn?.checkedAt ?? this.checkedAt,
      });
    }
    const loginCommands: ProviderAccounts['loginCommands'] = {};
    for (const kind of this.kinds) if (LOGIN_COMMANDS[kind]) loginCommands[kind] = LOGIN_COMMANDS[kind];
    return { accounts, statuses, secretsAvailable: false, loginCommands };
  }

  /** The kind of an account this host has (its default included), or undefined. */
  kindOf(id: string): AgentKind | undefined {
    if ((this.kinds as readonly string[]).includes(id)) return id as AgentKind;
    const account = this.accounts[id];
    return account && (this.kinds as readonly string[]).includes(account.kind) ? (account.kind as AgentKind) : undefined;
  }

  /** Takes what the CLI said of an account's sign-in; answers whether its status changed. */
  noteSignIn(id: string, signIn: { signedIn: boolean; email?: string | null; plan?: string | null; message?: string | null }): boolean {
    const before = this.signIns.get(id);
    const next = {
      state: signIn.signedIn ? ('ready' as const) : ('signed-out' as const),
      email: signIn.email ?? null,
      plan: signIn.plan ?? null,
      message: signIn.message ?? null,
      checkedAt: Date.now(),
    };
    this.signIns.set(id, next);
    return !before || before.state !== next.state || before.email !== next.email || before.plan !== next.plan || before.message !== next.message;
  }

  refresh(): ProviderAccounts {
    this.checkedAt = Date.now();
    return this.snapshot();
  }

  /** Replaces the whole map (an id left out is removed). */
  async save(next: ProviderAccountMap): Promise<ProviderAccounts> {
    const kept: ProviderAccountMap = {};
    for (const [id, account] of Object.entries(next)) {
      this.admit(id, account);
      const env = account.env?.map((variable) => {
        if (!variable.sensitive) return { name: variable.name, value: variable.value, sensitive: false };
        if (variable.value !== '' && !variable.valueRedacted) {
          throw new ProtocolError('secrets-unavailable', 'This host has no keychain to keep a secret in');
        }
        return { name: variable.name, value: '', sensitive: true };
      });
      kept[id] = { ...account, ...(env ? { env } : {}) };
    }
    this.accounts = kept;
    await this.write();
    return this.snapshot();
  }

  async create(kind: AgentKind, label: string, color?: string): Promise<{ id: string; snapshot: ProviderAccounts }> {
    const base = slug(label);
    let id = base;
    for (let i = 2; this.accounts[id] !== undefined || (this.kinds as readonly string[]).includes(id); i += 1) {
      id = `${base.slice(0, 60)}-${i}`;
    }
    this.accounts = { ...this.accounts, [id]: { kind, label, ...(color ? { color } : {}) } };
    await this.write();
    return { id, snapshot: this.snapshot() };
  }

  private write(): Promise<void> {
    const text = JSON.stringify({ version: 1, accounts: this.accounts });
    const next = this.chain.then(() => replaceFile(this.file, text));
    this.chain = next.catch(() => undefined);
    return next;
  }
}

function redact(account: ProviderAccount): ProviderAccount {
  if (!account.env) return account;
  return {
    ...account,
    env: account.env.map((v) => (v.sensitive ? { name: v.name, value: '', sensitive: true, valueRedacted: true } : v)),
  };
}

/** An account id from a label: a slug matching ProviderAccountId. */
function slug(label: string): string {
  const cleaned = label
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '');
  return (cleaned || 'account').slice(0, 64);
}
