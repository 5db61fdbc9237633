import { describe, expect, it } from 'vitest';
import {
  AgentInfoSchema,
  AgentKindSchema,
  AgentStatusSchema,
  ApprovalAnswerPayloadSchema,
  ApprovalAnswerResultSchema,
  ApprovalPreferencePayloadSchema,
  ApprovalRequestSchema,
  SessionApprovalsEventSchema,
  SessionIdSchema,
  SessionStatusEventSchema,
  SuggestedTitleSchema,
} from '../../src/contracts/agent.ts';
import { WorktreeSchema } from '../../src/contracts/worktree.ts';

describe('agent kinds and statuses', () => {
  it('are closed sets', () => {
    expect(AgentKindSchema.options).toEqual(['claude', 'codex', 'gemini', 'copilot', 'apple']);
    expect(AgentStatusSchema.options).toEqual(['running', 'needs-you', 'idle', 'error', 'exited']);
    expect(AgentKindSchema.safeParse('Claude').success).toBe(false);
    expect(SessionIdSchema.safeParse('').success).toBe(false);
  });

  it('suggested titles run 1..80', () => {
    expect(SuggestedTitleSchema.safeParse('x'.repeat(80)).success).toBe(true);
    expect(SuggestedTitleSchema.safeParse('x'.repeat(81)).success).toBe(false);
    expect(SuggestedTitleSchema.safeParse('').success).toBe(false);
  });
});

describe('terminal agents', () => {
  const agent = {
    kind: 'codex',
    agentSessionId: 'sess-1',
    transcriptPath: null,
    status: 'needs-you',
    live: false,
    updatedAt: 1,
    requests: [{ id: 'r1', source: 'hook', kind: 'approval', toolName: 'Bash', title: null, text: 'rm -rf build', createdAt: 1 }],
  };

  it('report a session, or null when it has none', () => {
    expect(SessionStatusEventSchema.safeParse({ sessionId: 's', agent }).success).toBe(true);
    expect(SessionStatusEventSchema.safeParse({ sessionId: 's', agent: null }).success).toBe(true);
    expect(SessionStatusEventSchema.safeParse({ sessionId: 's' }).success).toBe(false);
  });

  it('refuse near misses', () => {
    expect(AgentInfoSchema.safeParse({ ...agent, agentSessionId: '' }).success).toBe(false);
    expect(AgentInfoSchema.safeParse({ ...agent, transcriptPath: undefined }).success).toBe(false);
    expect(AgentInfoSchema.safeParse({ ...agent, requests: [{ ...agent.requests[0], kind: 'notice' }] }).success).toBe(false);
  });

  const approval = {
    requestId: 'a1',
    sessionId: 's',
    toolName: 'Bash',
    summary: 'npm publish',
    choices: [
      { id: 'yes', kind: 'allow', label: 'Allow' },
      { id: 'always', kind: 'remember', label: 'Always allow npm' },
      { id: 'no', kind: 'deny', label: 'Deny' },
    ],
    createdAt: 1,
    expiresAt: 2,
  };

  it('offer at least one choice on an approval', () => {
    expect(SessionApprovalsEventSchema.safeParse({ sessionId: 's', approvals: [approval] }).success).toBe(true);
    expect(ApprovalRequestSchema.safeParse({ ...approval, choices: [] }).success).toBe(false);
    expect(ApprovalRequestSchema.safeParse({ ...approval, toolName: '' }).success).toBe(false);
    expect(ApprovalRequestSchema.safeParse({ ...approval, choices: [{ id: 'x', kind: 'skip', label: 'Skip' }] }).success).toBe(false);
  });

  it('answer by choice id and learn whether it was accepted', () => {
    expect(ApprovalAnswerPayloadSchema.safeParse({ sessionId: 's', requestId: 'a1', choiceId: 'yes' }).success).toBe(true);
    expect(ApprovalAnswerPayloadSchema.safeParse({ sessionId: 's', requestId: 'a1', choiceId: '' }).success).toBe(false);
    expect(ApprovalAnswerResultSchema.safeParse({ accepted: false }).success).toBe(true);
    expect(ApprovalPreferencePayloadSchema.safeParse({ enabled: 'yes' }).success).toBe(false);
  });
});

describe('worktrees', () => {
  it('parse a bare worktree and an inspected one', () => {
    expect(WorktreeSchema.safeParse({ path: '/w', branch: 'b' }).success).toBe(true);
    const inspected = {
      path: '/w',
      branch: 'b',
      from: { commit: 'abc123' },
      work: { changed: 1, untracked: 0, ahead: 2, behind: 3, operation: 'rebase' },
    };
    expect(WorktreeSchema.safeParse(inspected).success).toBe(true);
    expect(WorktreeSchema.safeParse({ ...inspected, from: { branch: 'main' } }).success).toBe(false);
    expect(WorktreeSchema.safeParse({ ...inspected, work: { changed: -1, untracked: 0, ahead: 0 } }).success).toBe(false);
  });
});
