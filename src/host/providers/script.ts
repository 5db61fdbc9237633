// The `script` backend: answers every message from a scripted JSON file instead of a real CLI. It
// exists for tests and for `npm start` on a machine without agent CLIs, and answers as whichever
// AgentKind the host config maps it to (e.g. "Claude Code (scripted)").
//
// Script file format (validated by ScriptFileSchema below):
//
//   {
//     "model": "scripted",                       // optional: the model slug it reports
//     "replies": [                               // the first reply whose `match` finds the user text wins
//       { "match": "approve|permission",         // a case-insensitive regular expression; omit it on
//         "steps": [ … ] },                      // the last reply to make it the default
//       { "steps": [ … ] }
//     ]
//   }
//
// Steps run in order; every `delayMs` is the pause before each piece (keep them small in tests):
//
//   { "type": "thinking", "text": "…", "deltas": 3, "delayMs": 5 }          a thought, streamed in N pieces
//   { "type": "text", "text": "…", "deltas": 4, "delayMs": 5 }              reply text, streamed in N pieces;
//                                                                             a new text step opens a new reply
//   { "type": "tool", "name": "Bash", "input": {…}, "output": "…",           a tool call: its output streamed
//     "deltas": 2, "delayMs": 5, "error": false, "description": "…",        in N pieces, then done (or error),
//     "changes": [{ "path": "a.ts", "kind": "update", "diff": "…" }] }       with optional file changes
//   { "type": "approval", "toolName": "Bash", "input": {…},                 asks for permission and waits; on
//     "description": "…", "canAllowAlways": true,                           `deny` it says `deniedText` and the
//     "allowAlways": { "label": "…", "description": "…" },                  turn ends there
//     "deniedText": "…" }
//   { "type": "question", "questions": [{ "id": "color", "header": "Color",  asks and waits for the answers;
//     "question": "Which?", "multiSelect": false,                           later text may echo them with
//     "choices": [{ "label": "Red", "description": "…" }] }], "async": false } {{answer:color}}
//   { "type": "visual", "title": "…", "html": "<p>…</p>", "maxHeight": 400,  publishes a visual
//     "layout": "wide" }
//   { "type": "cost", "usd": 0.0123, "contextTokens": 1200, "contextWindow": 200000 }  the turn's cost/usage
//   { "type": "fail", "message": "…" }                                        ends the turn as an error
//   { "type": "stream", "count": 500, "size": 40, "delayMs": 0 }             load: many deltas, fast
//   { "type": "wait", "ms": 50 }                                              keeps the turn running a while
//
// Text may say {{text}} (the user's message), {{answer:<questionId>}} and {{answers}} (all answers).
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { AgentKind, ModelSelection, ProviderInfo } from '../../contracts/index.ts';
import { readJsonFile } from '../disk.ts';
import type { Provider, ProviderChatContext, ProviderEmit, ProviderForkRequest, ProviderSession, TurnInput } from './provider.ts';

const delayMs = z.int().min(0).max(60_000).default(0);
const deltas = z.int().min(1).max(100_000).default(1);

const ScriptStepSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('thinking'), text: z.string(), deltas, delayMs }),
  z.object({ type: z.literal('text'), text: z.string(), deltas, delayMs, phase: z.string().optional() }),
  z.object({
    type: z.literal('tool'),
    name: z.string().min(1),
    input: z.unknown().default({}),
    output: z.string().default(''),
    description: z.string().optional(),
    deltas,
    delayMs,
    error: z.boolean().default(false),
    changes: z
      .array(
        z.object({
          path: z.string(),
          kind: z.enum(['add', 'update', 'delete']),
          diff: z.string().default(''),
        }),
      )
      .optional(),
  }),
  z.object({
    type: z.literal('approval'),
    toolName: z.string().min(1),
    input: z.unknown().default({}),
    description: z.string().nullable().default(null),
    canAllowAlways: z.boolean().default(false),
    allowAlways: z.object({ label: z.string(), description: z.string().default('') }).optional(),
    deniedText: z.string().default('Permission was denied, so I stopped here.'),
  }),
  z.object({
    type: z.literal('question'),
    questions: z
      .array(
        z.object({
          id: z.string().min(1),
          header: z.string().default(''),
          question: z.string(),
          multiSelect: z.boolean().default(false),
          choices: z.array(z.object({ label: z.string().min(1), description: z.string().default('') })).default([]),
        }),
      )
      .min(1),
    async: z.boolean().optional(),
  }),
  z.object({
    type: z.literal('visual'),
    title: z.string(),
    html: z.string(),
    maxHeight: z.number().optional(),
    heights: z.array(z.tuple([z.number(), z.number()])).optional(),
    layout: z.enum(['inline', 'wide']).optional(),
  }),
  z.object({
    type: z.literal('cost'),
    usd: z.number().min(0),
    contextTokens: z.int().min(0).optional(),
    contextWindow: z.int().positive().nullable().optional(),
  }),
  z.object({ type: z.literal('fail'), message: z.string() }),
  z.object({ type: z.literal('stream'), count: z.int().min(1).max(1_000_000), size: z.int().min(1).max(1_000_000), delayMs }),
  z.object({ type: z.literal('wait'), ms: z.int().min(0).max(600_000) }),
]);
export type ScriptStep = z.output<typeof ScriptStepSchema>;

export const ScriptFileSchema = z.object({
  model: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]*$/)
    .default('scripted'),
  replies: z
    .array(
      z.object({
        match: z
          .string()
          .optional()
          .refine((source) => source === undefined || isRegExp(source), 'Not a valid regular expression'),
        steps: z.array(ScriptStepSchema),
      }),
    )
    .min(1),
});
export type ScriptFile = z.output<typeof ScriptFileSchema>;

/** The script `npm start` and a config without `script` use. */
export const DEFAULT_SCRIPT_PATH = fileURLToPath(new URL('./script.default.json', import.meta.url));

const PRODUCT_NAMES: Record<AgentKind, string> = {
  claude: 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  copilot: 'Copilot CLI',
  apple: 'Apple Intelligence',
};

/** Reads and validates a script file; the error names the file and the first problem. */
export function loadScript(file: string = DEFAULT_SCRIPT_PATH): ScriptFile {
  return readJsonFile(file, ScriptFileSchema, 'script');
}

/** Which reply answers `text`: the first whose pattern matches, else the first without a pattern. */
export function pickReply(script: ScriptFile, text: string): ScriptStep[] {
  for (const reply of script.replies) {
    if (reply.match === undefined || new RegExp(reply.match, 'i').test(text)) return reply.steps;
  }
  return [{ type: 'text', text: 'This script has no reply for that.', deltas: 1, delayMs: 0 }];
}

export interface ScriptProviderOptions {
  kind: AgentKind;
  script: ScriptFile;
  /** The host's version, reported as the backend version. */
  version?: string;
  /** What it is called (default: `<the kind's product> (scripted)`). */
  name?: string;
}

/** What the scripted agent is called when a host serves it because it found no CLI that can chat. */
export const DEMO_AGENT_NAME = 'Demo agent (scripted)';

export class ScriptProvider implements Provider {
  readonly kind: AgentKind;
  readonly canSteer = true;
  private readonly script: ScriptFile;
  private readonly version: string;
  private readonly name: string;

  constructor(options: ScriptProviderOptions) {
    this.kind = options.kind;
    this.name = options.name ?? `${PRODUCT_NAMES[options.kind]} (scripted)`;
    this.script = options.script;
    this.version = options.version ?? '0.0.0';
  }

  info(): ProviderInfo {
    return {
      kind: this.kind,
      name: this.name,
      installed: true,
      version: this.version,
      models: [{ slug: this.script.model, name: 'Scripted', legacy: false, isDefault: true, options: [] }],
      defaultModel: this.script.model,
      capabilities: {
        chat: true,
        terminal: false,
        hooks: false,
        streamsToolOutput: true,
        diffs: 'unified',
        attachments: true,
        mentions: true,
        denyReason: true,
        allowAlways: true,
        asyncQuestions: true,
        compaction: 'native',
        reportsCost: true,
        reportsContextWindow: true,
        reportsThinking: true,
        slashCommands: false,
      },
      resumeCommand: '',
    };
  }

  normalizeSelection(_selection: ModelSelection | undefined): ModelSelection {
    // One model, no options: whatever was asked for becomes it.
    return { model: this.script.model, options: {} };
  }

  open(context: ProviderChatContext): ProviderSession {
    return new ScriptSession(this.script, context);
  }

  /** A scripted conversation holds nothing to copy: a fork simply gets a session of its own. */
  async fork(_request: ProviderForkRequest): Promise<string> {
    return `script-${token()}`;
  }
}

interface Waiter {
  resolve(value: unknown): void;
}

/** One chat's scripted "process": alive from the first turn until killed. */
class ScriptSession implements ProviderSession {
  running = false;
  private readonly script: ScriptFile;
  private readonly context: ProviderChatContext;
  private turn: { id: string; abort: AbortController; steered: string[] } | null = null;
  private readonly waiting = new Map<string, Waiter>();
  /** The context the script last reported: what a compaction folds. */
  private contextTokens: number | null = null;

  constructor(script: ScriptFile, context: ProviderChatContext) {
    this.script = script;
    this.context = context;
  }

  startTurn(input: TurnInput, emit: ProviderEmit): void {
    this.turn?.abort.abort();
    const turn = { id: input.turnId, abort: new AbortController(), steered: [] as string[] };
    this.turn = turn;
    void this.run(input, turn, emit);
  }

  /** A compaction as a backend reports one: the context it folded, then a done turn. */
  compact(turnId: string, emit: ProviderEmit): void {
    this.turn?.abort.abort();
    const turn = { id: turnId, abort: new AbortController(), steered: [] as string[] };
    this.turn = turn;
    void Promise.resolve().then(() => {
      if (turn.abort.signal.aborted) return;
      if (this.turn === turn) this.turn = null;
      emit({ type: 'compaction', preTokens: this.contextTokens });
      this.contextTokens = 0;
      emit({ type: 'turn-end', state: 'done' });
    });
  }

  steer(input: TurnInput): boolean {
    if (!this.turn || this.turn.abort.signal.aborted) return false;
    this.turn.steered.push(input.text);
    return true;
  }

  interrupt(): void {
    this.turn?.abort.abort();
    this.turn = null;
    for (const waiter of this.waiting.values()) waiter.resolve(null);
    this.waiting.clear();
  }

  answerApproval(requestId: string, decision: 'allow' | 'allow-always' | 'deny'): void {
    this.settle(requestId, decision);
  }

  answerQuestion(requestId: string, answers: Record<string, string> | null): void {
    this.settle(requestId, answers);
  }

  async kill(): Promise<void> {
    this.interrupt();
    this.running = false;
  }

  private settle(requestId: string, value: unknown): void {
    const waiter = this.waiting.get(requestId);
    if (!waiter) return;
    this.waiting.delete(requestId);
    waiter.resolve(value);
  }

  private async run(input: TurnInput, turn: { id: string; abort: AbortController; steered: string[] }, emit: ProviderEmit): Promise<void> {
    const signal = turn.abort.signal;
    // Never emit from inside startTurn: the runtime finishes its own bookkeeping first.
    await Promise.resolve();
    const out: ProviderEmit = (output) => {
      if (!signal.aborted) emit(output);
    };
    if (!this.running) {
      this.running = true;
      out({ type: 'session', agentSessionId: this.context.agentSessionId ?? `script-${token()}`, model: this.script.model });
    }
    const answers: Record<string, string> = {};
    const fill = (text: string): string =>
      text
        .replaceAll('{{text}}', input.text)
        .replaceAll(
          '{{answers}}',
          Object.entries(answers)
            .map(([id, answer]) => `${id}: ${answer}`)
            .join(', '),
        )
        .replace(/\{\{answer:([^}]+)\}\}/g, (_match, id: string) => answers[id] ?? '');
    try {
      for (const step of pickReply(this.script, input.text)) {
        if (signal.aborted) return;
        switch (step.type) {
          case 'thinking':
            for (const piece of split(fill(step.text), step.deltas)) {
              await pause(step.delayMs, signal);
              out({ type: 'thinking', text: piece });
            }
            out({ type: 'thinking-end' });
            break;
          case 'text':
            for (const piece of split(fill(step.text), step.deltas)) {
              await pause(step.delayMs, signal);
              out({ type: 'text', text: piece, phase: step.phase });
            }
            out({ type: 'text-end' });
            break;
          case 'stream':
            for (let i = 0; i < step.count; i += 1) {
              await pause(step.delayMs, signal);
              if (signal.aborted) return;
              out({ type: 'text', text: filler(i, step.size) });
            }
            out({ type: 'text-end' });
            break;
          case 'tool': {
            const toolUseId = `tool-${token()}`;
            out({ type: 'tool-start', toolUseId, name: step.name, input: step.input, description: step.description });
            for (const piece of split(fill(step.output), step.deltas)) {
              await pause(step.delayMs, signal);
              out({ type: 'tool-output', toolUseId, text: piece });
            }
            out({ type: 'tool-end', toolUseId, output: fill(step.output), error: step.error, changes: step.changes });
            break;
          }
          case 'approval': {
            const requestId = `approval-${token()}`;
            const decision = this.wait(requestId, signal);
            out({
              type: 'approval',
              requestId,
              toolUseId: null,
              toolName: step.toolName,
              input: step.input,
              description: step.description,
              canAllowAlways: step.canAllowAlways,
              allowAlways: step.allowAlways,
            });
            const answer = await decision;
            if (signal.aborted || answer === null) return;
            if (answer === 'deny') {
              out({ type: 'text', text: fill(step.deniedText) });
              out({ type: 'text-end' });
              out({ type: 'turn-end', state: 'done' });
              return;
            }
            break;
          }
          case 'question': {
            const requestId = `question-${token()}`;
            const reply = this.wait(requestId, signal);
            out({ type: 'question', requestId, questions: step.questions, async: step.async });
            const given = await reply;
            if (signal.aborted) return;
            if (given && typeof given === 'object') Object.assign(answers, given);
            break;
          }
          case 'visual':
            out({ type: 'visual', title: fill(step.title), html: step.html, maxHeight: step.maxHeight, heights: step.heights, layout: step.layout });
            break;
          case 'cost':
            if (step.contextTokens !== undefined) this.contextTokens = step.contextTokens;
            out({ type: 'usage', costUsd: step.usd, contextTokens: step.contextTokens, contextWindow: step.contextWindow });
            break;
          case 'fail':
            out({ type: 'turn-end', state: 'error', message: fill(step.message) });
            return;
          case 'wait':
            await pause(step.ms, signal);
            break;
        }
      }
      for (const text of turn.steered) {
        out({ type: 'text', text: `Noted while working: ${text}` });
        out({ type: 'text-end' });
      }
      out({ type: 'turn-end', state: 'done' });
    } catch (error) {
      if (signal.aborted) return;
      out({ type: 'turn-end', state: 'error', message: error instanceof Error ? error.message : String(error) });
    } finally {
      if (this.turn === turn) this.turn = null;
    }
  }

  private wait(requestId: string, signal: AbortSignal): Promise<unknown> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(null);
      this.waiting.set(requestId, { resolve });
    });
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** `text` cut into `n` nearly equal pieces (fewer if it is shorter), never splitting a surrogate pair. */
export function split(text: string, n: number): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const count = Math.min(n, chars.length);
  const size = Math.ceil(chars.length / count);
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}

function filler(index: number, size: number): string {
  const word = `chunk ${index} `;
  return word.repeat(Math.ceil(size / word.length)).slice(0, size);
}

function token(): string {
  return randomBytes(6).toString('base64url');
}

function isRegExp(source: string): boolean {
  try {
    new RegExp(source, 'i');
    return true;
  } catch {
    return false;
  }
}
