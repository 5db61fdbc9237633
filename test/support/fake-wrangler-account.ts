// The "Cloudflare account" the deploy test's stand-in wrangler (fake-wrangler.ts) keeps in a folder:
// what a test sets up before a deploy and reads back after it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface FakeAccountState {
  signedIn: boolean;
  email: string;
  accounts: { id: string; name: string }[];
  databases: { uuid: string; name: string; created_at: string }[];
  /** By wrangler environment (the deploy always passes --env). */
  workers: Record<string, { secrets: Record<string, string>; deploys: number }>;
  /** Commands that fail with this message (by the command's first words, e.g. `secret list`). */
  failures?: Record<string, string>;
}

/** One wrangler command the deploy ran: its argv, what it wrote on stdin, and the environment it set. */
export interface FakeCall {
  args: string[];
  stdin: string;
  env: { WRANGLER_SEND_METRICS?: string; CLOUDFLARE_ACCOUNT_ID?: string };
}

export const FAKE_WRANGLER = path.join(import.meta.dirname, 'fake-wrangler.ts');

/** A fresh account in `dir`: signed in to one account with no databases, unless `account` says otherwise. */
export function writeFakeAccount(dir: string, account: Partial<FakeAccountState> = {}): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'state.json'),
    JSON.stringify(
      {
        signedIn: true,
        email: 'owner@example.com',
        accounts: [{ id: 'acc-1', name: 'Home' }],
        databases: [],
        workers: {},
        ...account,
      } satisfies FakeAccountState,
      null,
      2,
    ),
  );
  writeFileSync(path.join(dir, 'calls.jsonl'), '');
}

export function readFakeAccount(dir: string): FakeAccountState {
  return JSON.parse(readFileSync(path.join(dir, 'state.json'), 'utf8')) as FakeAccountState;
}

/** The calls made since the last `clearFakeCalls`. */
export function readFakeCalls(dir: string): FakeCall[] {
  return readFileSync(path.join(dir, 'calls.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FakeCall);
}

export function clearFakeCalls(dir: string): void {
  writeFileSync(path.join(dir, 'calls.jsonl'), '');
}
