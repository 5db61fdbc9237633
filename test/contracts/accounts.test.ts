import { describe, expect, it } from 'vitest';
import {
  ProviderAccountCreatePayloadSchema,
  ProviderAccountCreateResultSchema,
  ProviderAccountIdSchema,
  ProviderAccountSchema,
  ProviderAccountsSavePayloadSchema,
  ProviderAccountsSchema,
  ProviderAccountStatusSchema,
  ProviderAccountVariableSchema,
} from '../../src/contracts/provider-accounts.ts';

const status = {
  id: 'claude',
  kind: 'claude',
  state: 'ready',
  email: 'me@example.com',
  plan: null,
  organization: null,
  home: '/home/me/.claude',
  message: null,
  checkedAt: 0,
};

describe('account ids', () => {
  it('are slugs of a lowercase letter and up to 63 more', () => {
    for (const id of ['claude', 'work-2', 'a', `a${'b'.repeat(63)}`, 'x_y']) {
      expect(ProviderAccountIdSchema.safeParse(id).success, id).toBe(true);
    }
  });

  it('are never paths, capitals, or too long', () => {
    for (const id of ['', '2work', 'Work', '../x', 'a/b', '-a', `a${'b'.repeat(64)}`, 'a b']) {
      expect(ProviderAccountIdSchema.safeParse(id).success, id).toBe(false);
    }
  });
});

describe('accounts', () => {
  it('keep an unknown CLI kind as a plain string so it round-trips', () => {
    expect(ProviderAccountSchema.parse({ kind: 'future-cli', home: '~/.future' })).toEqual({
      kind: 'future-cli',
      home: '~/.future',
    });
    expect(ProviderAccountSchema.safeParse({ kind: '' }).success).toBe(false);
    expect(ProviderAccountSchema.safeParse({ kind: 'codex', home: '' }).success).toBe(false);
  });

  it('carry a redacted secret as an empty value', () => {
    const secret = { name: 'ANTHROPIC_API_KEY', value: '', sensitive: true, valueRedacted: true };
    expect(ProviderAccountVariableSchema.safeParse(secret).success).toBe(true);
    expect(ProviderAccountVariableSchema.safeParse({ ...secret, name: '1BAD' }).success).toBe(false);
    expect(ProviderAccountVariableSchema.safeParse({ ...secret, name: 'A-B' }).success).toBe(false);
    expect(ProviderAccountVariableSchema.safeParse({ ...secret, name: `A${'B'.repeat(128)}` }).success).toBe(false);
  });

  it('key the map by account id', () => {
    expect(ProviderAccountsSavePayloadSchema.safeParse({ accounts: { work: { kind: 'claude' } } }).success).toBe(true);
    expect(ProviderAccountsSavePayloadSchema.safeParse({ accounts: { 'Work Account': { kind: 'claude' } } }).success).toBe(false);
  });

  it('snapshot with statuses, and login commands only for known kinds', () => {
    const snapshot = { accounts: {}, statuses: [status], secretsAvailable: false, loginCommands: { codex: 'codex login' } };
    expect(ProviderAccountsSchema.safeParse(snapshot).success).toBe(true);
    expect(ProviderAccountsSchema.safeParse({ ...snapshot, loginCommands: { cursor: 'cursor login' } }).success).toBe(false);
    expect(ProviderAccountCreateResultSchema.safeParse({ ...snapshot, id: 'work' }).success).toBe(true);
    expect(ProviderAccountCreateResultSchema.safeParse(snapshot).success).toBe(false);
  });

  it('status needs the nullable texts present and a known state', () => {
    const { email: _, ...withoutEmail } = status;
    expect(ProviderAccountStatusSchema.safeParse(withoutEmail).success).toBe(false);
    expect(ProviderAccountStatusSchema.safeParse({ ...status, state: 'logged-in' }).success).toBe(false);
  });

  it('create trims the label and bounds it to 1..80', () => {
    expect(ProviderAccountCreatePayloadSchema.parse({ kind: 'codex', label: '  Work  ' }).label).toBe('Work');
    expect(ProviderAccountCreatePayloadSchema.safeParse({ kind: 'codex', label: '   ' }).success).toBe(false);
    expect(ProviderAccountCreatePayloadSchema.safeParse({ kind: 'codex', label: 'x'.repeat(81) }).success).toBe(false);
    expect(ProviderAccountCreatePayloadSchema.safeParse({ kind: 'future-cli', label: 'x' }).success).toBe(false);
  });
});
