// Generated session files in the shapes the pinned CLIs write them (Claude Code 2.1.197's project
// transcripts, Codex 0.171's rollouts; field names as in the files the real CLIs wrote in this
// project's tests), for the usage scanner's tests and its bench.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ClaudeCall {
  at: number;
  model: string;
  messageId: string;
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
  /** How many lines the CLI splits the message into (one per content block); each repeats the usage. Default 2. */
  blocks?: number;
}

/** The lines Claude Code writes for one user message and the model call answering it. */
export function claudeLines(session: string, cwd: string, call: ClaudeCall, filler = 0): string[] {
  const stamp = new Date(call.at).toISOString();
  const base = { isSidechain: false, userType: 'external', entrypoint: 'sdk-cli', cwd, sessionId: session, version: '2.1.197', gitBranch: 'HEAD' };
  const lines = [
    JSON.stringify({
      parentUuid: null,
      promptId: `p-${call.messageId}`,
      type: 'user',
      message: { role: 'user', content: filler > 0 ? 'x'.repeat(filler) : 'KW-HELLO' },
      uuid: `u-${call.messageId}`,
      timestamp: stamp,
      permissionMode: 'default',
      promptSource: 'sdk',
      ...base,
    }),
  ];
  const usage = {
    input_tokens: call.input,
    cache_creation_input_tokens: call.cacheWrite ?? 0,
    cache_read_input_tokens: call.cacheRead ?? 0,
    output_tokens: call.output,
    server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
    service_tier: 'standard',
    cache_creation: { ephemeral_1h_input_tokens: call.cacheWrite1h ?? 0, ephemeral_5m_input_tokens: (call.cacheWrite ?? 0) - (call.cacheWrite1h ?? 0) },
    inference_geo: '',
    iterations: [],
    speed: 'standard',
  };
  for (let block = 0; block < (call.blocks ?? 2); block += 1) {
    const content =
      block === 0
        ? [{ type: 'thinking', thinking: 'Thinking about it.', signature: `sig-${call.messageId}` }]
        : [{ type: 'text', text: 'Hello! How can I help today?' }];
    lines.push(
      JSON.stringify({
        parentUuid: `u-${call.messageId}`,
        message: {
          id: call.messageId,
          type: 'message',
          role: 'assistant',
          model: call.model,
          content,
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage,
          stop_details: null,
        },
        requestId: `req_${call.messageId}`,
        type: 'assistant',
        uuid: `a-${call.messageId}-${block}`,
        timestamp: stamp,
        ...base,
      }),
    );
  }
  return lines;
}

export interface CodexCall {
  at: number;
  input: number;
  cached?: number;
  output: number;
  reasoning?: number;
}

/** A Codex rollout's opening lines: the session's metadata and the turn's context (its model). */
export function codexOpening(session: string, cwd: string, model: string, at: number): string[] {
  const stamp = new Date(at).toISOString();
  return [
    JSON.stringify({
      timestamp: stamp,
      ordinal: 0,
      type: 'session_meta',
      payload: {
        account_scoped: true,
        session_id: session,
        id: session,
        timestamp: stamp,
        cwd,
        originator: 'tether',
        cli_version: '0.171.0',
        source: 'vscode',
        model_provider: 'tether-test',
      },
    }),
    JSON.stringify({
      timestamp: stamp,
      ordinal: 1,
      type: 'turn_context',
      payload: { turn_id: `turn-${session}`, cwd, approval_policy: 'untrusted', model, effort: 'medium' },
    }),
  ];
}

const codexUsage = (call: CodexCall) => ({
  input_tokens: call.input,
  cached_input_tokens: call.cached ?? 0,
  cache_write_input_tokens: 0,
  output_tokens: call.output,
  reasoning_output_tokens: call.reasoning ?? 0,
  total_tokens: call.input + call.output,
});

/** One model call as Codex 0.171 records it: a `token_usage_record`, then the `token_count` event with the running total. */
export function codexCallLines(session: string, call: CodexCall, runningTotal: number, filler = 0): string[] {
  const stamp = new Date(call.at).toISOString();
  const usage = codexUsage(call);
  return [
    JSON.stringify({
      timestamp: stamp,
      type: 'response_item',
      payload: { type: 'function_call_output', call_id: 'c1', output: filler > 0 ? 'y'.repeat(filler) : 'ok' },
    }),
    JSON.stringify({
      timestamp: stamp,
      type: 'token_usage_record',
      payload: { thread_id: session, session_id: session, response_id: `resp-${call.at}`, usage, turn_token_usage: usage, thread_token_usage: usage },
    }),
    JSON.stringify({
      timestamp: stamp,
      type: 'event_msg',
      payload: {
        type: 'token_count',
        info: { total_token_usage: { ...usage, total_tokens: runningTotal }, last_token_usage: usage, model_context_window: 190000 },
        rate_limits: { limit_id: 'codex', primary: null, secondary: null },
      },
    }),
  ];
}

/** The same call as older Codex builds record it: only the `token_count` event (counted when its total moves). */
export function codexTokenCountLine(call: CodexCall, runningTotal: number): string {
  const usage = codexUsage(call);
  return JSON.stringify({
    timestamp: new Date(call.at).toISOString(),
    type: 'event_msg',
    payload: {
      type: 'token_count',
      info: { total_token_usage: { ...usage, total_tokens: runningTotal }, last_token_usage: usage, model_context_window: 190000 },
      rate_limits: null,
    },
  });
}

export function writeLines(file: string, lines: readonly string[], append = false): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const text = lines.map((line) => `${line}\n`).join('');
  if (append) appendFileSync(file, text);
  else writeFileSync(file, text);
}

/** Claude Code's project folder name for a working folder (every character outside [A-Za-z0-9] becomes `-`). */
export function claudeProjectDir(config: string, cwd: string): string {
  return path.join(config, 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'));
}
