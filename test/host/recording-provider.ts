// A scripted backend that records what the runtime asks of it: every open (its context) and every
// turn's input. `canFork: false` makes it a backend without the fork capability, `canCompact: false`
// one that cannot compact on request.
import type { Provider, ProviderChatContext, ProviderForkRequest, ProviderSession, TurnInput } from '../../src/host/providers/provider.ts';
import { ScriptProvider } from '../../src/host/providers/script.ts';
import type { ScriptFile } from '../../src/host/providers/script.ts';
import type { AgentKind } from '../../src/contracts/index.ts';
import { TEST_SCRIPT } from './harness.ts';

export class RecordingProvider implements Provider {
  readonly kind: AgentKind;
  readonly canSteer = true;
  readonly opened: ProviderChatContext[] = [];
  readonly turns: TurnInput[] = [];
  readonly forks: ProviderForkRequest[] = [];
  readonly fork?: (request: ProviderForkRequest) => Promise<string>;
  private readonly inner: ScriptProvider;
  private readonly canCompact: boolean;

  constructor(options: { kind?: AgentKind; script?: ScriptFile; canFork?: boolean; canCompact?: boolean } = {}) {
    this.kind = options.kind ?? 'claude';
    this.canCompact = options.canCompact !== false;
    this.inner = new ScriptProvider({ kind: this.kind, script: options.script ?? TEST_SCRIPT });
    if (options.canFork !== false) {
      this.fork = (request) => {
        this.forks.push(request);
        return this.inner.fork(request);
      };
    }
  }

  info() {
    return this.inner.info();
  }

  normalizeSelection(selection: Parameters<Provider['normalizeSelection']>[0]) {
    return this.inner.normalizeSelection(selection);
  }

  open(context: ProviderChatContext): ProviderSession {
    this.opened.push({ ...context });
    const session = this.inner.open(context);
    const startTurn = session.startTurn.bind(session);
    session.startTurn = (input, emit) => {
      this.turns.push(input);
      startTurn(input, emit);
    };
    if (!this.canCompact) session.compact = undefined;
    return session;
  }
}
