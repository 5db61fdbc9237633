// Which tool call a Copilot permission request is about.
//
// Copilot builds have sent `session/request_permission` with `toolCall.toolCallId` set to a fixed
// label (`shell-permission`, `write-permission`, …) instead of the call's id (github/copilot-cli#989;
// 1.0.102 sends the real id). Trusting such an id would attach the person's decision to the wrong
// card, or to a made-up one. So a request is attached to a tool call only when that is certain:
//   - its id is a call this turn announced; or
//   - exactly one call still waiting has the same kind and the same subject (the same command, the
//     same file) as the request itself.
// Anything else is shown apart from every tool, with the request's own content (the adapter does
// that for `null`), and the session says why. The answer always goes back under the request's own
// JSON-RPC id, so a decision can never reach another request; what it allows is what it showed.
import type { RequestPermissionRequest } from '@agentclientprotocol/sdk';
import type { AcpToolCallView } from '../acp/index.ts';
import { record } from '../acp/mapper.ts';

/** An id that names a kind of permission rather than a call: the fixed labels of #989. */
const FIXED_LABEL = /(^|[-_])permission$/i;

/**
 * The call id to attach the request to; `null` to show it apart (ambiguous, or a label that matches
 * nothing); `undefined` for the adapter's default (an id this turn has not announced yet, which is
 * not a label: the request announces its call).
 */
export function matchPermission(request: RequestPermissionRequest, calls: ReadonlyMap<string, AcpToolCallView>): string | null | undefined {
  const asked = record(request.toolCall);
  const id = typeof asked.toolCallId === 'string' ? asked.toolCallId : null;
  if (id !== null && calls.has(id)) return id;
  const subject = subjectOf(asked.kind, asked.rawInput, asked.locations);
  const candidates =
    subject === null
      ? []
      : [...calls.values()].filter(
          (call) =>
            !call.ended &&
            call.status !== 'completed' &&
            call.status !== 'failed' &&
            (typeof asked.kind !== 'string' || call.kind === asked.kind) &&
            subjectOf(call.kind, call.rawInput, call.locations) === subject,
        );
  if (candidates.length === 1) return candidates[0]!.toolCallId;
  if (candidates.length === 0 && id !== null && !FIXED_LABEL.test(id)) return undefined;
  return null;
}

/**
 * What a call or request acts on, comparable between the two (Copilot's call and its request word
 * their input differently: `{command, description}` vs `{command, commands}`, `{path, file_text}` vs
 * `{fileName, diff}`): the command for a shell, else the file. Null when neither is said.
 */
export function subjectOf(kind: unknown, rawInput: unknown, locations: unknown): string | null {
  const input = record(rawInput);
  if (kind === 'execute' || typeof input.command === 'string') {
    return typeof input.command === 'string' && input.command !== '' ? `command:${input.command}` : null;
  }
  const located = Array.isArray(locations) ? record(locations[0]).path : undefined;
  const file = [input.path, input.fileName, input.file_path, located].find((p): p is string => typeof p === 'string' && p !== '');
  return file ? `file:${file}` : null;
}
