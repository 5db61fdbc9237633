// Every value a client (or the relay) chooses that reaches an agent CLI, pushed through each
// provider's command builder as an attacker would write it: a leading `-` or `=`, NUL, newlines,
// spaces, shell syntax, other scripts, very long. Each builder either refuses it (`bad-request`
// naming the field, so nothing starts) or carries it only inside one `--flag=value` argument, as a
// value no CLI parser can read as a flag of its own. The builders are the pure functions the
// drivers start their processes with (claudeArgs, codexThreadPlan, the ACP specs' commandLine).
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChatCreatePayloadSchema, ModelSelectionSchema, ModelSlugSchema, resumeCommandFor } from '../../src/contracts/index.ts';
import { CLI_KINDS, CLI_PROFILES } from '../../src/host/providers/roster.ts';
import type { ModelSelection, RuntimeMode } from '../../src/contracts/index.ts';
import { ProtocolError } from '../../src/contracts/errors.ts';
import { claudeArgs } from '../../src/host/providers/claude/driver.ts';
import { codexArgs, codexThreadPlan } from '../../src/host/providers/codex/driver.ts';
import { copilotSpec } from '../../src/host/providers/copilot/index.ts';
import { geminiSpec } from '../../src/host/providers/gemini/index.ts';
import { admitSessionId, AGENT_SESSION_ID, UUID_SESSION_ID } from '../../src/host/providers/cli-values.ts';
import type { ProviderChatContext } from '../../src/host/providers/provider.ts';

const SESSION = '0199a213-81c0-7800-8aa1-bbab2a035a53';

/** Strings an attacker would try, and some that are fine, so both answers are exercised. */
const hostile: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '--settings={"apiKeyHelper":"touch /tmp/pwned"}',
    '--dangerously-skip-permissions',
    '--permission-mode=bypassPermissions',
    '-p',
    '-',
    '--',
    '=',
    '',
    ' ',
    '\n',
    '\0',
    '--resume',
    '-r',
    '--model',
    '-m',
    `${SESSION} --dangerously-skip-permissions`,
    `${SESSION}\n--settings={}`,
    `${SESSION}\0`,
    ` ${SESSION}`,
    `-${SESSION}`,
    '$(touch /tmp/pwned)',
    '`id`',
    'a;b',
    'a|b',
    'a&b',
    "a'b",
    'a"b',
    'a\\b',
    'a b',
    'a\tb',
    'a\rb',
    '../../../etc/passwd',
    '/etc/passwd',
    '~/.ssh/id_rsa',
    'opus\u200b',
    'ｏｐｕｓ',
    'оpus',
    '\u202eopus',
    'sonnet\u2028',
    'x'.repeat(10_000),
    'opus',
    'sonnet',
    'haiku',
    'gpt-5.1-codex',
    'claude-sonnet-4.5',
    'auto',
    'gemini-3.5-flash',
    'high',
    'low',
  ),
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/),
  fc
    .tuple(
      fc.constantFrom('-', '--', '=', ' ', '\n', '\0', '\t', '$(', ';', ''),
      fc.oneof(fc.uuid(), fc.stringMatching(/^[a-z0-9.-]{1,12}$/)),
      fc.constantFrom('', ' -x', '\n', '\0', '=--x', ')'),
    )
    .map(([a, b, c]) => `${a}${b}${c}`),
);

const modes = fc.constantFrom<RuntimeMode>('supervised', 'auto-accept-edits', 'auto', 'full-access');

function context(selection: ModelSelection, runtimeMode: RuntimeMode, agentSessionId: string | null): ProviderChatContext {
  return { chatId: 'c', cwd: '/work', runtimeMode, selection, agentSessionId };
}

/** The build either refuses with `bad-request` naming one of `fields`, or answers. */
function built<T>(fields: string[], build: () => T): T | null {
  try {
    return build();
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe('bad-request');
    expect(fields.some((field) => (error as ProtocolError).message.startsWith(`${field} must be`))).toBe(true);
    return null;
  }
}

/**
 * `argv` is `baseline` (the same build with harmless values) but where a client's value is: those
 * arguments are `--flag=value` with the baseline's flag, and the value starts with a letter or
 * digit and holds no whitespace, NUL or shell syntax. So no value stands as an argument of its
 * own, and none could be read as a flag even by a parser that split it off.
 */
function onlyAsFlagValues(argv: readonly string[], baseline: readonly string[]): void {
  expect(argv.length).toBe(baseline.length);
  argv.forEach((arg, i) => {
    if (arg === baseline[i]) return;
    const flag = /^(--[a-z-]+)=/.exec(baseline[i]!)?.[1];
    expect(flag, `argument ${i} (${JSON.stringify(arg)}) replaces ${JSON.stringify(baseline[i])}, which is no --flag=value`).toBeDefined();
    expect(arg.startsWith(`${flag}=`)).toBe(true);
    expect(arg.slice(flag!.length + 1)).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:/-]*$/);
  });
}

describe('Claude Code: claudeArgs', () => {
  const baseline = claudeArgs(context({ model: 'opus', options: { effort: 'high' } }, 'supervised', SESSION), SESSION, []);

  it('takes every client value as --flag=value: --resume=, --model=, --effort=', () => {
    expect(baseline).toContain(`--resume=${SESSION}`);
    expect(baseline).toContain('--model=opus');
    expect(baseline).toContain('--effort=high');
    expect(baseline).not.toContain('--resume');
  });

  const build = (session: string | null, model: string, effort: string | undefined, fork = false) =>
    claudeArgs({ ...context({ model, options: effort === undefined ? {} : { effort } }, 'supervised', session), forkSession: fork }, session, []);

  // One value hostile at a time, the others harmless, so each field's own check is what answers.
  it('a hostile session id is refused, or is a UUID inside --resume=', () => {
    fc.assert(
      fc.property(hostile, fc.boolean(), (session, fork) => {
        const argv = built(['resume'], () => build(session, 'opus', 'high', fork));
        if (!argv) return;
        onlyAsFlagValues(
          argv.filter((a) => a !== '--fork-session'),
          baseline,
        );
        expect(argv).toContain(`--resume=${session}`);
        expect(session).toMatch(/^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$/);
      }),
      { numRuns: 500 },
    );
  });

  it('a hostile model is refused, or is a slug inside --model=', () => {
    fc.assert(
      fc.property(hostile, (model) => {
        // No effort: whether a model takes one is the effort's own check, below.
        const argv = built(['selection.model'], () => build(SESSION, model, undefined));
        if (argv) onlyAsFlagValues(argv, build(SESSION, 'opus', undefined));
      }),
      { numRuns: 500 },
    );
  });

  it("a hostile effort is refused unless it is one of the model's own levels, inside --effort=", () => {
    fc.assert(
      fc.property(hostile, fc.constantFrom('opus', 'sonnet', 'haiku'), (effort, model) => {
        const argv = built(['selection.options.effort'], () => build(SESSION, model, effort));
        if (!argv) return;
        expect(model).not.toBe('haiku');
        expect(['low', 'medium', 'high', 'xhigh', 'max']).toContain(effort);
        onlyAsFlagValues(argv, baseline);
      }),
      { numRuns: 500 },
    );
  });

  it('the reproduced attack is refused, and nothing like it reaches the argv', () => {
    const attack = '--settings={"apiKeyHelper":"touch /tmp/pwned"}';
    expect(() => claudeArgs(context({ model: 'opus', options: {} }, 'supervised', attack), attack, [])).toThrow(/^resume must be a UUID/);
    expect(() =>
      claudeArgs(context({ model: 'opus', options: {} }, 'supervised', '--dangerously-skip-permissions'), '--dangerously-skip-permissions', []),
    ).toThrow(ProtocolError);
  });

  it("the host config's own args stay as the owner wrote them, after the driver's", () => {
    const argv = claudeArgs(context({ model: 'opus', options: {} }, 'auto', null), null, ['--add-dir', '/srv/shared']);
    expect(argv.slice(-2)).toEqual(['--add-dir', '/srv/shared']);
  });
});

describe('Codex: codexThreadPlan (thread/resume, thread/fork, thread/start and turn/start params)', () => {
  const efforts = ['low', 'medium', 'high'];

  const plan = (thread: string | null, model: string, effort: string, forking = false, mode: RuntimeMode = 'supervised') =>
    codexThreadPlan(context({ model, options: { effort } }, mode, thread), thread, forking, efforts);

  it("a hostile thread id is refused, or is a UUID in thread/resume's or thread/fork's threadId", () => {
    fc.assert(
      fc.property(hostile, fc.boolean(), modes, (thread, forking, mode) => {
        const opened = built(['resume'], () => plan(thread, 'gpt-5.1-codex', 'high', forking, mode));
        if (!opened) return;
        expect(opened.method).toBe(forking ? 'thread/fork' : 'thread/resume');
        expect(opened.params.threadId).toMatch(/^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$/);
      }),
      { numRuns: 500 },
    );
  });

  it("a hostile model is refused, or is a slug in the thread's model", () => {
    fc.assert(
      fc.property(hostile, (model) => {
        const opened = built(['selection.model'], () => plan(SESSION, model, 'high'));
        if (opened && model !== 'default') expect(opened.params.model).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/);
        if (opened && model === 'default') expect(opened.params.model).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it("a hostile effort is refused unless it is one of the model's own", () => {
    fc.assert(
      fc.property(hostile, (effort) => {
        const opened = built(['selection.options.effort'], () => plan(null, 'gpt-5.1-codex', effort));
        if (opened) expect(efforts).toContain(opened.turn.effort);
      }),
      { numRuns: 500 },
    );
  });

  it("without the model's list an effort is still held to an option value's shape", () => {
    fc.assert(
      fc.property(hostile, (effort) => {
        const plan = built(['selection.options.effort'], () =>
          codexThreadPlan(context({ model: 'default', options: { effort } }, 'supervised', null), null, false, null),
        );
        if (plan) expect(plan.turn.effort).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/);
      }),
      { numRuns: 300 },
    );
  });

  it("its command line carries no client value at all (only the host config's)", () => {
    expect(codexArgs({ command: 'codex', clientVersion: '0' })).toEqual(['app-server', '--enable', 'default_mode_request_user_input']);
  });
});

describe("Gemini CLI and Copilot CLI: the ACP specs' commandLine", () => {
  const gemini = geminiSpec({ command: 'gemini', clientVersion: '0' });
  const copilot = copilotSpec({ command: 'copilot', clientVersion: '0' });

  it('give the model as --model=', () => {
    expect(gemini.commandLine({ selection: { model: 'gemini-3.5-flash', options: {} }, runtimeMode: 'supervised' }).args).toEqual([
      '--acp',
      '--model=gemini-3.5-flash',
    ]);
    expect(copilot.commandLine({ selection: { model: 'claude-sonnet-4.5', options: {} }, runtimeMode: 'supervised' }).args).toContain(
      '--model=claude-sonnet-4.5',
    );
  });

  for (const [name, spec, harmless] of [
    ['gemini', gemini, 'auto'],
    ['copilot', copilot, 'gpt-5'],
  ] as const) {
    it(`${name}: a hostile model is refused or only a --model= value`, () => {
      fc.assert(
        fc.property(hostile, modes, (model, runtimeMode) => {
          const line = built(['selection.model'], () => spec.commandLine({ selection: { model, options: {} }, runtimeMode }));
          if (!line) return;
          const baseline = spec.commandLine({ selection: { model: harmless, options: {} }, runtimeMode });
          if (model === 'default' && name === 'copilot')
            expect(line.args).toEqual(spec.commandLine({ selection: { model: 'default', options: {} }, runtimeMode }).args);
          else onlyAsFlagValues(line.args, baseline.args);
        }),
        { numRuns: 500 },
      );
    });
  }

  it("session/load gets only a UUID for Gemini and Copilot, and the contract's id for any other ACP agent", () => {
    expect(gemini.sessionIds).toBe(UUID_SESSION_ID);
    expect(copilot.sessionIds).toBe(UUID_SESSION_ID);
    fc.assert(
      fc.property(hostile, (id) => {
        const uuid = built(['resume'], () => admitSessionId('resume', id, UUID_SESSION_ID));
        if (uuid !== null) expect(uuid).toMatch(/^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$/);
        const any = built(['resume'], () => admitSessionId('resume', id, AGENT_SESSION_ID));
        if (any !== null) expect(any).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the wire: what a client may send at all', () => {
  it("chat.create's resume and a selection's model refuse a flag, whitespace, NUL and shell syntax before any host code runs", () => {
    fc.assert(
      fc.property(hostile, (value) => {
        const resume = ChatCreatePayloadSchema.safeParse({ chatId: 'c', resume: value });
        if (resume.success) expect(value).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/);
        const selection = ModelSelectionSchema.safeParse({ model: value, options: {} });
        if (selection.success) expect(value).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:/[\]-]{0,127}$/);
      }),
      { numRuns: 500 },
    );
    expect(ChatCreatePayloadSchema.safeParse({ chatId: 'c', resume: '--settings={"apiKeyHelper":"x"}' }).success).toBe(false);
    expect(ModelSelectionSchema.safeParse({ model: 'claude-opus-4-8[1m]', options: {} }).success).toBe(true);
  });

  it('every catalog slug is a command-line model slug', () => {
    fc.assert(
      fc.property(hostile, (value) => {
        if (ModelSlugSchema.safeParse(value).success && value.length <= 128) {
          expect(
            built(['selection.model'], () => gemini().commandLine({ selection: { model: value, options: {} }, runtimeMode: 'supervised' })),
          ).not.toBeNull();
        }
      }),
      { numRuns: 300 },
    );
    function gemini() {
      return geminiSpec({ command: 'gemini', clientVersion: '0' });
    }
  });
});

describe("the resume command a person pastes into a terminal (provider.list's resumeCommand)", () => {
  it('keeps any session id one word, glued to its flag or after --, as a POSIX shell reads it', () => {
    const expected: Record<string, (id: string) => string[]> = {
      claude: (id) => [`--resume=${id}`],
      codex: (id) => ['resume', '--', id],
      gemini: (id) => [`--resume=${id}`],
      copilot: (id) => [`--resume=${id}`],
    };
    // A shell cannot carry NUL in an argument at all; `$&`-like patterns are resumeCommandFor's own kept caveat.
    fc.assert(
      fc.property(
        hostile.filter((id) => !id.includes('\0') && !/\$[$&`']/.test(id)),
        (id) => {
          for (const kind of CLI_KINDS) {
            const [, ...words] = resumeCommandFor(CLI_PROFILES[kind].resumeCommand, id).split(' ');
            // The shell's own reading: the words after the CLI's name, as `printf` gets them.
            const heard = execFileSync('sh', ['-c', `printf '%s\\0' ${words.join(' ')}`], { encoding: 'utf8' })
              .split('\0')
              .slice(0, -1);
            expect(heard).toEqual(expected[kind]!(id));
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
