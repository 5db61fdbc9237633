// CopilotSession: one Copilot chat, the ACP adapter's session with what Copilot needs on top. It
// only reads and adds to the outputs going by; the adapter still does all the talking.
//   - The mode: Copilot's permission level is its launch flags (modes.ts), which the
//     adapter cannot see, so the session's mode is filled in from them; autopilot, the one ACP mode
//     that allows everything, stays full access.
//   - Tools it ran without asking: every tool shows as a tool item whatever happened to approvals
//     (the adapter maps `tool_call`s on their own). Some builds approved without asking
//     (github/copilot-cli#4537); a shell command, or an edit, that finished with no request in a
//     chat that asks first gets a warning beside it, unless the person allowed that kind always.
//   - A permission request matched to no tool call (permissions.ts) gets a note saying so.
//   - Copilot's own `Info:` lines, which it sends as reply text, become info notes; a session it
//     cannot open for want of a sign-in says how to give it one.
//   - `compact`: Copilot's `/compact` as a prompt; its answer is one line of text, the marker is ours.
import type { RuntimeMode } from '../../../contracts/index.ts';
import type { ProviderChatContext, ProviderEmit, ProviderOutput, ProviderSession, TurnInput } from '../provider.ts';
import { COPILOT_DEFAULT_MODEL, COPILOT_FLAGS } from './modes.ts';

/** The permission Copilot asks for before a tool of this name (as the adapter names tools) runs. */
type Asked = 'shell' | 'write';

function askedFor(toolName: string): Asked | null {
  if (toolName === 'Bash') return 'shell';
  if (toolName === 'Write' || toolName === 'Edit') return 'write';
  return null;
}

const INFO = 'Info: ';
const SIGN_IN =
  'Copilot has no GitHub sign-in for this account: run `copilot login` with its COPILOT_HOME, or give the account your own model provider (COPILOT_PROVIDER_BASE_URL, COPILOT_PROVIDER_TYPE, COPILOT_MODEL; see `copilot help providers`).';
const AFTER_TOOL = new Set<ProviderOutput['type']>(['tool-start', 'tool-output', 'tool-end', 'approval']);

const WORDS: Record<Asked, string> = { shell: 'a shell command', write: 'a file edit' };

/**
 * Copilot's outputs, completed: pure, one per chat (what the person allowed always holds for the
 * chat's process), one `turn(emit)` per turn.
 */
export class CopilotReader {
  private readonly runtimeMode: RuntimeMode;
  /** What this chat's launch flags make Copilot ask before. */
  private readonly asks: ReadonlySet<Asked>;
  /** Kinds the person allowed always (Copilot then no longer asks for them). */
  private readonly allowedAlways = new Set<Asked>();
  /** Approvals waiting, by request id: what they were for. */
  private readonly approvals = new Map<string, Asked | null>();
  private contextTokens: number | null = null;

  /** The model Copilot runs when the chat leaves it to Copilot (`COPILOT_MODEL`), if that is known. */
  private readonly model: string | null;

  constructor(runtimeMode: RuntimeMode, model: string | null = null) {
    this.runtimeMode = runtimeMode;
    this.model = model;
    const effective = COPILOT_FLAGS[runtimeMode].effective;
    this.asks = new Set<Asked>(effective === 'full-access' ? [] : effective === 'supervised' ? ['shell', 'write'] : ['shell']);
  }

  /** The person answered an approval. */
  answered(requestId: string, decision: 'allow' | 'allow-always' | 'deny'): void {
    const asked = this.approvals.get(requestId);
    this.approvals.delete(requestId);
    if (decision === 'allow-always' && asked) this.allowedAlways.add(asked);
  }

  /** The emit the adapter gets for one turn (`compacting`: the turn is `/compact`). */
  turn(emit: ProviderEmit, compacting = false): ProviderEmit {
    const tools = new Map<string, { asked: Asked | null; approved: boolean; command: string | null }>();
    /** Kinds with a request this turn that no tool call could be matched to: any such tool may be the one it allowed. */
    const unmatched = new Set<Asked>();
    const reply: string[] = [];
    let usage: ProviderOutput | null = null;
    /** The output before this one: whether the model can be speaking now. */
    let last: ProviderOutput['type'] | null = null;
    return (output) => {
      // A title says nothing of what the model is doing: it must not part an `Info:` line from its tool.
      if (output.type === 'title') return emit(output);
      const previous = last;
      last = output.type;
      switch (output.type) {
        case 'session':
        case 'mode':
          emit(this.confirmed(output));
          return;
        case 'tool-start': {
          const input = output.input as Record<string, unknown> | null;
          tools.set(output.toolUseId, { asked: askedFor(output.name), approved: false, command: typeof input?.command === 'string' ? input.command : null });
          break;
        }
        case 'approval': {
          const asked = askedFor(output.toolName);
          this.approvals.set(output.requestId, asked);
          const tool = output.toolUseId ? tools.get(output.toolUseId) : undefined;
          if (tool) tool.approved = true;
          else {
            if (asked) unmatched.add(asked);
            emit({
              type: 'note',
              level: 'warning',
              text: 'Copilot did not say which tool call this permission request is for, so it is shown as Copilot sent it, apart from the tools.',
            });
          }
          break;
        }
        case 'tool-end': {
          const tool = tools.get(output.toolUseId);
          emit(output);
          if (
            tool?.asked &&
            !output.error &&
            !tool.approved &&
            this.asks.has(tool.asked) &&
            !this.allowedAlways.has(tool.asked) &&
            !unmatched.has(tool.asked)
          ) {
            const what = tool.command ? `${WORDS[tool.asked]} (${tool.command})` : WORDS[tool.asked];
            emit({ type: 'note', level: 'warning', text: `Copilot ran ${what} without asking, though this chat asks first. Check what it did.` });
          }
          return;
        }
        case 'usage':
          if (compacting) {
            usage = output;
            return;
          }
          if (output.contextTokens !== undefined) this.contextTokens = output.contextTokens;
          break;
        case 'text':
          if (compacting) {
            reply.push(output.text);
            return;
          }
          // Copilot reports some of its own events as reply text (`Info: <file>` once a write was
          // allowed, `Info: Operation cancelled by user` after a denial), always whole and right
          // after a tool's news; the model's own words come after its next request's usage.
          if (output.text.startsWith(INFO) && previous !== null && AFTER_TOOL.has(previous)) {
            last = 'note';
            emit({ type: 'note', level: 'info', text: output.text.slice(INFO.length) });
            return;
          }
          break;
        case 'text-end':
          if (compacting) return;
          break;
        case 'turn-end':
          if (output.state === 'error' && /authentication required/i.test(output.message ?? '')) {
            emit({ type: 'note', level: 'warning', text: SIGN_IN });
          }
          if (compacting && output.state === 'done') {
            emit({ type: 'compaction', preTokens: this.contextTokens });
            if (reply.length) emit({ type: 'note', level: 'info', text: reply.join('') });
            // The context after the fold, which Copilot reported before it said it folded.
            if (usage) emit(usage);
          }
          break;
      }
      emit(output);
    };
  }

  /** The adapter reports Copilot's ACP mode; what Copilot may do unasked is its launch flags. */
  private confirmed<T extends Extract<ProviderOutput, { type: 'session' | 'mode' }>>(output: T): T {
    const launched = COPILOT_FLAGS[this.runtimeMode];
    if (output.type === 'session' && output.model === COPILOT_DEFAULT_MODEL && this.model) output = { ...output, model: this.model };
    // Its mode ids are URLs (`…/session-modes#agent`): the name is the fragment.
    const mode = output.permissionMode?.split('#').pop();
    if (output.effectiveRuntimeMode !== undefined) return { ...output, ...(mode ? { permissionMode: mode } : {}) };
    return {
      ...output,
      permissionMode: mode ? `${mode}, ${launched.word}` : launched.word,
      effectiveRuntimeMode: launched.effective,
    };
  }
}

export class CopilotSession implements ProviderSession {
  private readonly inner: ProviderSession;
  private readonly reader: CopilotReader;

  /** `env`: the provider's own variables, under the account's. */
  constructor(inner: ProviderSession, context: ProviderChatContext, env: Readonly<Record<string, string>> = {}) {
    this.inner = inner;
    const named = context.accountEnv?.COPILOT_MODEL ?? env.COPILOT_MODEL;
    this.reader = new CopilotReader(context.runtimeMode, context.selection.model !== COPILOT_DEFAULT_MODEL ? context.selection.model : (named ?? null));
  }

  get running(): boolean {
    return this.inner.running;
  }

  startTurn(input: TurnInput, emit: ProviderEmit): void {
    this.inner.startTurn(input, this.reader.turn(emit));
  }

  compact(turnId: string, emit: ProviderEmit): void {
    this.inner.startTurn({ turnId, text: '/compact', attachments: [] }, this.reader.turn(emit, true));
  }

  interrupt(): void {
    this.inner.interrupt();
  }

  answerApproval(requestId: string, decision: 'allow' | 'allow-always' | 'deny', message?: string): void {
    this.reader.answered(requestId, decision);
    this.inner.answerApproval(requestId, decision, message);
  }

  answerQuestion(requestId: string, answers: Record<string, string> | null): void {
    this.inner.answerQuestion(requestId, answers);
  }

  kill(): Promise<void> {
    return this.inner.kill();
  }
}
