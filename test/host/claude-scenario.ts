// The scripted model behind the tests that run the real `claude` binary: each user message names
// what the model does with a keyword (the last one wins, since the CLI folds a message whose turn
// failed into the next one), and tool results get a short reply quoting them.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AnthropicServer, firstUserText, hasImage, lastUserText, toolResults, type MessagesRequest, type ScriptedReply } from '../support/anthropic-server.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ClaudeProvider } from '../../src/host/providers/claude/index.ts';
import { openCore, TestClient, tempDir, until } from './harness.ts';

export const CLAUDE_BIN = path.resolve(import.meta.dirname, '../../node_modules/.bin/claude');
const SUBAGENT_MARK = 'SUBAGENT-PROMPT';
/** In a subagent's prompt: it runs a long command instead (KW-LONGTASK), for stopping it mid-way. */
const SLOW_SUBAGENT_MARK = 'SUBAGENT-SLOW';
/** Words of the summary request Claude Code makes for `/compact` (2.1.197), and the summary the model gives. */
const COMPACT_ASK = 'create a detailed summary of the conversation';
export const COMPACT_SUMMARY = 'SCRIPTED-SUMMARY: the person greeted the agent twice.';
/** What KW-STREAM answers: a reply long enough, and streamed slowly enough (~3 s), for a fault to land mid-stream. */
export const STREAM_REPLY = Array.from({ length: 60 }, (_, i) => `word-${i + 1}`).join(' ') + '.';

export function scenarioReply(request: MessagesRequest): ScriptedReply {
  const results = toolResults(request);
  if (firstUserText(request).includes(SUBAGENT_MARK)) {
    // The subagent runs one command, then reports.
    if (results.size > 0) return { blocks: [{ type: 'text', text: 'Subagent report: found 3 files.' }] };
    return firstUserText(request).includes(SLOW_SUBAGENT_MARK)
      ? { blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 120', description: 'Wait from the subagent' } }] }
      : { blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo sub-echo', description: 'List from the subagent' } }] };
  }
  // `/compact`: the CLI asks the model for a summary of the conversation, in the same turn's last message.
  if (lastUserText(request).includes(COMPACT_ASK)) {
    return {
      blocks: [{ type: 'text', text: `<analysis>A short chat.</analysis>\n<summary>${COMPACT_SUMMARY}</summary>` }],
      usage: { input_tokens: 2000, output_tokens: 60 },
    };
  }
  // A keyword first: after an interrupt the refused tool's result shares a message with the next ask.
  const keyword = [...lastUserText(request).matchAll(/KW-([A-Z]+)/g)].at(-1)?.[1];
  if (!keyword && results.size > 0) {
    const said = [...results.values()].map((r) => `${r.isError ? 'refused: ' : ''}${r.text}`).join(' | ');
    return { blocks: [{ type: 'text', text: `Tool said: ${said}` }], usage: { input_tokens: 300, output_tokens: 40 } };
  }
  switch (keyword) {
    case 'APPROVE':
      return {
        blocks: [
          { type: 'text', text: 'Making the probe.' },
          { type: 'tool_use', name: 'Bash', input: { command: 'mkdir -p probe && date > probe/stamp.txt', description: 'Make a probe' } },
        ],
      };
    case 'QUESTION':
      return {
        blocks: [
          {
            type: 'tool_use',
            name: 'AskUserQuestion',
            input: {
              questions: [
                {
                  question: 'Which color?',
                  header: 'Color',
                  multiSelect: false,
                  options: [
                    { label: 'Red', description: 'warm' },
                    { label: 'Blue', description: 'cool' },
                  ],
                },
              ],
            },
          },
        ],
      };
    case 'TASK':
      return {
        blocks: [
          {
            type: 'tool_use',
            name: 'Task',
            input: { description: 'Find files', prompt: `${SUBAGENT_MARK}: list the files`, subagent_type: 'general-purpose' },
          },
        ],
      };
    case 'LONGTASK':
      return {
        blocks: [
          {
            type: 'tool_use',
            name: 'Task',
            input: { description: 'Wait long', prompt: `${SUBAGENT_MARK} ${SLOW_SUBAGENT_MARK}: wait`, subagent_type: 'general-purpose' },
          },
        ],
      };
    case 'BACKGROUND':
      return { blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 300', run_in_background: true, description: 'Wait in the background' } }] };
    case 'SLEEP':
      return { blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 30', description: 'Wait a while' } }] };
    case 'STREAM':
      return { blocks: [{ type: 'text', text: STREAM_REPLY }], chunk: 8, delayMs: 50 };
    case 'LIMIT':
      // x-should-retry: false keeps the CLI from retrying, so the turn ends at once.
      return { status: 429, errorType: 'rate_limit_error', message: 'Rate limited', headers: { 'x-should-retry': 'false', 'retry-after': '3600' } };
    case 'IMAGE':
      return { blocks: [{ type: 'text', text: hasImage(request) ? 'I see an image.' : 'I see no image.' }] };
    default:
      return {
        blocks: [
          { type: 'thinking', thinking: 'The user greets me; I answer briefly.' },
          { type: 'text', text: 'Hello! How can I help today?' },
        ],
        usage: { input_tokens: 1200, output_tokens: 30, cache_read_input_tokens: 800 },
      };
  }
}

/** The model server and a throwaway home for the CLI (its config folder and HOME, so no profile of this machine is read). */
export async function startScenario(): Promise<{ server: AnthropicServer; home: string; env: Record<string, string> }> {
  const server = await AnthropicServer.start({ reply: scenarioReply });
  const home = mkdtempSync(path.join(tmpdir(), 'tether-claude-home-'));
  return { server, home, env: claudeTestEnv(server, home) };
}

/** A host config (`<data>/config.json`) that runs the pinned CLI with `env` (the scenario's), in `work` as its one root. */
export function claudeHostConfig(env: Record<string, string>, work: string): Record<string, unknown> {
  return { providers: { claude: { backend: 'claude', command: CLAUDE_BIN, env } }, policy: { roots: [work] } };
}

export function claudeTestEnv(server: AnthropicServer, home: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'sk-scripted',
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    HOME: home,
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/**
 * A host running the real `claude` against the scenario, with chat `c` in `<data>/work` (the one
 * root, auto-accept-edits) made and attached; `close` ends host, model server and folders.
 */
export async function openClaudeChat(prefix: string): Promise<{ core: HostCore; client: TestClient; close: () => Promise<void> }> {
  const data = tempDir(prefix);
  const work = path.join(data.dir, 'work');
  mkdirSync(work, { recursive: true });
  const { server, env } = await startScenario();
  const core = await openCore(data.dir, {
    providers: [new ClaudeProvider({ command: CLAUDE_BIN, env })],
    policy: new HostPolicy({ home: data.dir, roots: [work] }),
  });
  const client = new TestClient(core);
  await client.ok('chat.create', { chatId: 'c', cwd: work, runtimeMode: 'auto-accept-edits' });
  await client.attach('c');
  return {
    core,
    client,
    close: async () => {
      await core.close();
      await server.close();
      data.cleanup();
    },
  };
}

/**
 * Sends `text` in `chatId` and allows each approval the turn asks (root may not skip Claude Code's
 * permissions, so a command may ask first) until the turn ends; the turn's id.
 */
export async function turnAllowingAll(client: TestClient, chatId: string, text: string): Promise<string> {
  const { turnId } = await client.ok<{ turnId: string }>('chat.send', { chatId, text });
  const approved = new Set<string>();
  await until(
    () => {
      for (const item of client.threads.get(chatId)?.items ?? []) {
        if (item.kind === 'approval' && item.decision === 'pending' && !approved.has(item.requestId)) {
          approved.add(item.requestId);
          void client.ok('chat.approve', { chatId, requestId: item.requestId, decision: 'allow' });
        }
      }
      const turn = client.threads.get(chatId)?.get(turnId);
      return turn?.kind === 'turn' && turn.state !== 'running';
    },
    'the turn',
    60_000,
  );
  return turnId;
}

/** The skill names the real Claude Code lists in its init frame in `cwd` with `env` (its model is unreachable: the frame comes first). */
export function claudeInitSkills(cwd: string, env: Record<string, string>): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE_BIN, ['-p', '--output-format=stream-json', '--verbose', 'hi'], {
      cwd,
      env: { ...process.env, ...env, ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.includes('"subtype":"init"'));
      if (line) {
        child.kill();
        resolve((JSON.parse(line) as { skills: string[] }).skills);
      }
    });
    child.on('exit', () => reject(new Error(`claude ended without an init frame: ${out.slice(0, 300)}`)));
  });
}
