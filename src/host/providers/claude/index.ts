// The Claude Code backend: `claude -p` with stream-json in and out, one process per chat (driver.ts),
// its output mapped by mapper.ts, its models in catalog.ts.
import type { AgentKind, ChatSkill, ChatSubagentItem, ModelSelection, ProviderInfo } from '../../../contracts/index.ts';
import { claudeSkills } from './skills.ts';
import { findSubagentFile, subagentItems } from './subagent-transcript.ts';
import { readFile } from 'node:fs/promises';
import { ProtocolError } from '../../../contracts/errors.ts';
import { homedir } from 'node:os';
import path from 'node:path';
import type {
  AccountLaunch,
  FileReadContext,
  Provider,
  SignInState,
  ProviderChatContext,
  ProviderForkRequest,
  ProviderSession,
  SubagentWork,
  TurnInput,
} from '../provider.ts';
import { readCliVersion } from '../cli-version.ts';
import { CLAUDE_PROFILE } from './profile.ts';
import { runCli } from '../run-cli.ts';
import { CLAUDE_MODELS, modelInfos, normalizeSelection } from './catalog.ts';
import { CLAUDE_SESSION_IDS, claudeEnv, ClaudeSession, messageText, type ClaudeLaunch } from './driver.ts';
import { claudeMentionedFiles } from './mentions.ts';

export interface ClaudeProviderOptions {
  /** Default: Claude Code answers as `claude`. */
  kind?: AgentKind;
  /** Default: `claude` from PATH. */
  command?: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
}

export class ClaudeProvider implements Provider {
  readonly kind: AgentKind;
  // Lines sent while a turn runs wait for it in the CLI; they are not steering.
  readonly canSteer = false;
  readonly sessionIds = CLAUDE_SESSION_IDS;
  private readonly launch: ClaudeLaunch;
  private found: { installed: boolean; version: string | null } = { installed: false, version: null };
  /** Resolves once the CLI answered `--version` (or could not). */
  readonly probed: Promise<void>;

  constructor(options: ClaudeProviderOptions = {}) {
    this.kind = options.kind ?? 'claude';
    this.launch = { command: options.command ?? 'claude', args: options.args ?? [], env: options.env ?? {} };
    this.probed = this.probe();
  }

  info(): ProviderInfo {
    const { installed, version } = this.found;
    return {
      kind: this.kind,
      name: CLAUDE_PROFILE.name,
      installed,
      version,
      models: installed ? modelInfos(CLAUDE_MODELS) : [],
      defaultModel: installed ? CLAUDE_MODELS.defaultModel : null,
      capabilities: CLAUDE_PROFILE.capabilities,
      resumeCommand: CLAUDE_PROFILE.resumeCommand,
    };
  }

  normalizeSelection(selection: ModelSelection | undefined): ModelSelection {
    return normalizeSelection(CLAUDE_MODELS, selection);
  }

  open(context: ProviderChatContext): ProviderSession {
    return new ClaudeSession(context, this.launch);
  }

  /**
   * A fork at the conversation's last turn continues the same session id: the runtime opens the
   * fork's driver with `forkSession`, so its first process runs `--resume <id> --fork-session` and
   * the CLI branches the transcript under a new id. Branching at an earlier turn is not offered.
   */
  async fork(request: ProviderForkRequest): Promise<string> {
    if (!request.latest) throw new ProtocolError('chat-unsupported', 'Claude Code can fork this conversation only at its last turn');
    return request.agentSessionId;
  }

  /**
   * Claude Code reads every file its message text mentions (`@path`), the attachments and mentions
   * the driver adds as such words included, and the images the driver reads to send inline. The
   * text judged holds every attachment as a word: a superset of what the driver sends.
   */
  filesRead(input: Pick<TurnInput, 'text' | 'attachments' | 'mentions'>, chat: FileReadContext): string[] {
    const env = { ...process.env, ...this.launch.env, ...chat.accountEnv };
    const home = env.HOME || homedir();
    return [...input.attachments.map((a) => a.path), ...claudeMentionedFiles(messageText(input, new Set()), chat.cwd, home)];
  }

  /** Claude Code writes every session to `<config>/projects/<cwd-slug>/<id>.jsonl` (`CLAUDE_CONFIG_DIR`, else `~/.claude`). */
  usageRoots(account: AccountLaunch | undefined): string[] {
    return [path.join(this.configFolder(account), 'projects')];
  }

  async listSkills(cwd: string, account: AccountLaunch | undefined): Promise<ChatSkill[]> {
    return claudeSkills(this.configFolder(account), cwd);
  }

  async subagentItems(agentSessionId: string, subagent: ChatSubagentItem, account: AccountLaunch | undefined): Promise<SubagentWork | null> {
    const file = await findSubagentFile(this.configFolder(account), agentSessionId, subagent.toolUseId);
    if (!file) return null;
    try {
      return { items: subagentItems(await readFile(file, 'utf8'), subagent.toolUseId), source: 'claude-transcript' };
    } catch {
      return null;
    }
  }

  /** `claude auth status` answers JSON: `loggedIn`, and for a claude.ai sign-in its email and subscription. */
  async checkSignIn(account: AccountLaunch | undefined): Promise<SignInState> {
    const env = claudeEnv({ accountHome: account?.home, accountEnv: account?.env }, this.launch);
    const { stdout, failure } = await runCli(this.launch.command, ['auth', 'status'], env);
    try {
      const status = JSON.parse(stdout) as { loggedIn?: unknown; email?: unknown; subscriptionType?: unknown; authMethod?: unknown };
      return {
        signedIn: status.loggedIn === true,
        email: typeof status.email === 'string' ? status.email : null,
        plan: typeof status.subscriptionType === 'string' ? status.subscriptionType : null,
        message: typeof status.authMethod === 'string' ? `Signed in by ${status.authMethod}` : null,
      };
    } catch {
      return { signedIn: false, message: failure ?? 'claude auth status did not answer JSON' };
    }
  }

  /** The account's config folder: `CLAUDE_CONFIG_DIR` as the CLI gets it, else `~/.claude`. */
  private configFolder(account: AccountLaunch | undefined): string {
    const env = claudeEnv({ accountHome: account?.home, accountEnv: account?.env }, this.launch);
    return env.CLAUDE_CONFIG_DIR || path.join(env.HOME || homedir(), '.claude');
  }

  /** Asks the CLI its version once (`2.1.197 (Claude Code)`); a CLI that does not answer is not installed. */
  private async probe(): Promise<void> {
    this.found = await readCliVersion(this.launch.command, { ...process.env, ...this.launch.env });
  }
}
