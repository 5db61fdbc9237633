// What `tether host pair` settles with the person before the machine is reachable: the folders
// chats may work in and the widest runtime mode. Asked on a terminal (or given as flags), written
// into the host config (`<data>/config.json`, `policy`), and printed, so nobody pairs a machine
// without seeing what it will allow. Without an answer the ceiling is `auto-accept-edits` and the
// folder is the one pair ran in (the home folder when that is `/`).
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { RuntimeModeSchema, MODE_ORDER } from '../contracts/index.ts';
import type { RuntimeMode } from '../contracts/index.ts';
import { replaceFileSync } from './disk.ts';
import { DEFAULT_MODE_CEILING } from './policy.ts';

export interface PairPolicyAnswers {
  /** Folders given (flags or answers); empty = none given. */
  roots: string[];
  modeCeiling?: RuntimeMode;
}

export interface PairPolicy {
  roots: string[];
  modeCeiling: RuntimeMode;
  /** Where it was written. */
  file: string;
  /** True when the config already had a policy and nothing was asked or given: it is kept as it was. */
  kept: boolean;
}

/** The folder pair offers when none is given: where it runs, unless that is the root of the disk. */
export function defaultRoot(cwd: string = process.cwd(), home: string = homedir()): string {
  const here = path.resolve(cwd);
  return here === path.parse(here).root ? path.resolve(home) : here;
}

/** Checks one folder answer: absolute (or ~), an existing folder; answers it resolved, or throws what is wrong. */
export function checkRoot(answer: string, home: string = homedir()): string {
  const text = answer.trim();
  if (text === '' || /[\u0000-\u001f\u007f]/.test(text)) throw new Error(`Not a folder: ${JSON.stringify(answer)}`);
  const expanded = text === '~' ? home : text.startsWith('~/') ? path.join(home, text.slice(2)) : text;
  if (!path.isAbsolute(expanded)) throw new Error(`Give the folder as an absolute path (or under ~): ${text}`);
  const folder = path.resolve(expanded);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new Error(`There is no folder ${folder}`);
  return folder;
}

export function checkMode(answer: string): RuntimeMode {
  const parsed = RuntimeModeSchema.safeParse(answer.trim());
  if (!parsed.success) throw new Error(`The widest mode is one of ${MODE_ORDER.join(', ')}, not ${answer}`);
  return parsed.data;
}

/**
 * Writes the policy into the config file (other settings kept): the answers given, else what the
 * config already says, else the defaults.
 */
export function writePairPolicy(configFile: string, answers: PairPolicyAnswers, cwd?: string): PairPolicy {
  let config: Record<string, unknown> = {};
  if (existsSync(configFile)) {
    const parsed: unknown = JSON.parse(readFileSync(configFile, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${configFile} is not a JSON object`);
    config = parsed as Record<string, unknown>;
  }
  const existing = (typeof config.policy === 'object' && config.policy !== null ? config.policy : {}) as Record<string, unknown>;
  const hadRoots = Array.isArray(existing.roots) && existing.roots.length > 0;
  const hadCeiling = typeof existing.modeCeiling === 'string';
  const roots = answers.roots.length > 0 ? answers.roots : hadRoots ? (existing.roots as string[]) : [defaultRoot(cwd)];
  const modeCeiling = answers.modeCeiling ?? (hadCeiling ? checkMode(existing.modeCeiling as string) : DEFAULT_MODE_CEILING);
  const kept = answers.roots.length === 0 && answers.modeCeiling === undefined && hadRoots && hadCeiling;
  if (!kept) {
    mkdirSync(path.dirname(configFile), { recursive: true });
    replaceFileSync(configFile, `${JSON.stringify({ ...config, policy: { ...existing, roots, modeCeiling } }, null, 2)}\n`);
  }
  return { roots, modeCeiling, file: configFile, kept };
}

/** The lines pair prints about the policy. */
export function describePairPolicy(policy: PairPolicy): string[] {
  return [
    `Chats on this machine may work only in: ${policy.roots.join(', ')}`,
    `The widest runtime mode a chat may use: ${policy.modeCeiling}${policy.modeCeiling === 'full-access' ? ' (agents run any command without asking)' : ''}`,
    `(${policy.kept ? 'as' : 'written to'} ${policy.file}; edit its "policy" to change it, then restart the host)`,
  ];
}
