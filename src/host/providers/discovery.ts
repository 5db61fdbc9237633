// Which agent CLIs this machine's person has: each supported CLI looked up on *their* PATH, its
// version, and whether its account is signed in, read from what the CLI itself keeps (a variable,
// its credentials file), never by running a login or asking a model. A host without a config of
// its own serves every CLI found here that can chat (`config.ts`), and says why any is not served.
//
// "Their" PATH: npm scripts and npx put every `node_modules/.bin` above the current folder first
// on PATH (and npm's own `node-gyp-bin`). Those hold this project's pinned test copies, never the
// person's CLIs with their logins, so discovery skips them and serves the executable it found by
// its absolute path (a bare `claude` would run the pinned copy again under `npm start`).
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CLI_KINDS, CLI_PROFILES, type CliKind } from './roster.ts';

export type SignInState = 'ready' | 'signed-out' | 'unknown';

export interface SignIn {
  state: SignInState;
  /** How it is signed in, or what to do to sign in, in a person's words. */
  how: string;
}

export interface DiscoveredAgent {
  kind: CliKind;
  name: string;
  /** The executable on the person's PATH (absolute); null: not installed. */
  executable: string | null;
  /** Its version (`x.y.z`); null when not installed or it named none. */
  version: string | null;
  signIn: SignIn;
  /** Whether a host without its own `providers` serves it: installed and not signed out. */
  served: boolean;
  /** Why it is served or not, one line. */
  why: string;
}

export interface DiscoveryOptions {
  /** The environment the CLIs would run with (PATH, the credential variables). Default: the process's. */
  env?: NodeJS.ProcessEnv;
  /** The person's home folder (where the CLIs keep their logins). Default: `os.homedir()`. */
  home?: string;
  /** Per `--version` probe. Default 10 s. */
  timeoutMs?: number;
  platform?: NodeJS.Platform;
}

/** `searchPath` without the folders npm and npx put first (`…/node_modules/.bin`, npm's `node-gyp-bin`). */
export function personalPath(searchPath: string): string {
  return searchPath
    .split(path.delimiter)
    .filter((dir) => dir !== '' && !isPackageBin(dir))
    .join(path.delimiter);
}

/** The folders `personalPath` leaves out, each once. */
export function skippedPath(searchPath: string): string[] {
  return [...new Set(searchPath.split(path.delimiter).filter((dir) => dir !== '' && isPackageBin(dir)))];
}

function isPackageBin(dir: string): boolean {
  const parts = path.normalize(dir).split(path.sep).filter(Boolean);
  const last = parts.at(-1);
  return (last === '.bin' && parts.at(-2) === 'node_modules') || last === 'node-gyp-bin';
}

/** The executable `command` resolves to on `searchPath`, as a shell would find it. */
export function findOnPath(command: string, searchPath: string): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** Every supported CLI, in the roster's order, as found on the person's PATH. */
export async function discoverAgents(options: DiscoveryOptions = {}): Promise<DiscoveredAgent[]> {
  const env = options.env ?? process.env;
  const home = options.home ?? homedir();
  const searchPath = personalPath(env.PATH ?? '');
  const skipped = skippedPath(env.PATH ?? '').join(path.delimiter);
  return Promise.all(
    CLI_KINDS.map(async (kind): Promise<DiscoveredAgent> => {
      const name = CLI_PROFILES[kind].name;
      const executable = findOnPath(CLI_PROFILES[kind].command, searchPath);
      if (!executable) {
        const copy = findOnPath(CLI_PROFILES[kind].command, skipped);
        const why = copy
          ? `not on PATH (${CLI_PROFILES[kind].command}); ${copy} is a project's own pinned copy, not yours`
          : `not on PATH (${CLI_PROFILES[kind].command})`;
        return { kind, name, executable: null, version: null, signIn: { state: 'unknown', how: 'not installed' }, served: false, why };
      }
      const version = packageVersion(executable, PACKAGES[kind]) ?? (await versionOf(executable, env, options.timeoutMs ?? 10_000));
      const signIn = readSignIn(kind, env, home, options.platform ?? process.platform);
      const served = signIn.state !== 'signed-out';
      return { kind, name, executable, version, signIn, served, why: served ? signIn.how : `signed out: ${signIn.how}` };
    }),
  );
}

/** The npm packages each CLI ships in (a global npm install links the command to a file inside it). */
const PACKAGES: Record<CliKind, string> = {
  claude: '@anthropic-ai/claude-code',
  codex: '@openai/codex',
  gemini: '@google/gemini-cli',
  copilot: '@github/copilot',
};

/**
 * The version of the npm package the executable is a file of, read from its package.json: what
 * `--version` prints, without starting the CLI (Gemini CLI takes seconds to load its bundle).
 * Null for any other install (a native binary, a script of another package).
 */
export function packageVersion(executable: string, packageName: string): string | null {
  try {
    let dir = path.dirname(realpathSync(executable));
    for (let depth = 0; depth < 4; depth++) {
      try {
        const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
        if (pkg.name === packageName && typeof pkg.version === 'string') return pkg.version;
      } catch {
        // no package.json here
      }
      dir = path.dirname(dir);
    }
  } catch {
    // a dangling link
  }
  return null;
}

function versionOf(executable: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(executable, ['--version'], { encoding: 'utf8', timeout: timeoutMs, env, windowsHide: true }, (error, stdout) => {
      resolve(error ? null : (/\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]*[0-9A-Za-z])?/.exec(stdout)?.[0] ?? null));
    });
  });
}

/** Whether the CLI's default account is signed in, from its variables and the files it keeps. */
export function readSignIn(kind: CliKind, env: NodeJS.ProcessEnv, home: string, platform: NodeJS.Platform = process.platform): SignIn {
  const set = (name: string): boolean => (env[name] ?? '') !== '';
  const file = (...parts: string[]): unknown => readJson(path.join(...parts));
  const expand = (value: string): string => (value === '~' || value.startsWith('~/') ? path.join(home, value.slice(1)) : value);
  switch (kind) {
    case 'claude': {
      for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'])
        if (set(name)) return { state: 'ready', how: `key from ${name}` };
      if (env.CLAUDE_CODE_USE_BEDROCK === '1' || env.CLAUDE_CODE_USE_VERTEX === '1')
        return { state: 'ready', how: env.CLAUDE_CODE_USE_BEDROCK === '1' ? 'Amazon Bedrock' : 'Google Vertex AI' };
      const dir = env.CLAUDE_CONFIG_DIR ? expand(env.CLAUDE_CONFIG_DIR) : path.join(home, '.claude');
      if (field(file(dir, '.credentials.json'), 'claudeAiOauth')) return { state: 'ready', how: `signed in (${path.join(dir, '.credentials.json')})` };
      // On macOS the token is in the Keychain; the account's name in .claude.json says a sign-in happened.
      const email = field(field(file(env.CLAUDE_CONFIG_DIR ? dir : home, '.claude.json'), 'oauthAccount'), 'emailAddress');
      if (typeof email === 'string')
        return platform === 'darwin'
          ? { state: 'ready', how: `signed in as ${email} (Keychain)` }
          : { state: 'unknown', how: `${email} signed in once, but no credentials file` };
      return { state: 'signed-out', how: 'run `claude`, then /login (or set ANTHROPIC_API_KEY)' };
    }
    case 'codex': {
      const dir = env.CODEX_HOME ? expand(env.CODEX_HOME) : path.join(home, '.codex');
      const auth = file(dir, 'auth.json');
      if (typeof field(auth, 'OPENAI_API_KEY') === 'string') return { state: 'ready', how: `API key (${path.join(dir, 'auth.json')})` };
      if (field(auth, 'tokens')) return { state: 'ready', how: `signed in with ChatGPT (${path.join(dir, 'auth.json')})` };
      // A provider of its own in config.toml (`model_provider = "…"`) needs no OpenAI sign-in.
      const toml = readText(path.join(dir, 'config.toml'));
      if (toml && /^\s*model_provider\s*=/m.test(toml)) return { state: 'ready', how: `its own model provider (${path.join(dir, 'config.toml')})` };
      return { state: 'signed-out', how: 'run `codex login`' };
    }
    case 'gemini': {
      if (set('GEMINI_API_KEY')) return { state: 'ready', how: 'API key from GEMINI_API_KEY' };
      if (env.GOOGLE_GENAI_USE_VERTEXAI === 'true') return { state: 'ready', how: 'Google Vertex AI (GOOGLE_GENAI_USE_VERTEXAI)' };
      if (set('GOOGLE_API_KEY')) return { state: 'ready', how: 'API key from GOOGLE_API_KEY' };
      const dir = path.join(env.GEMINI_CLI_HOME ? expand(env.GEMINI_CLI_HOME) : home, '.gemini');
      const selected = field(field(field(file(dir, 'settings.json'), 'security'), 'auth'), 'selectedType');
      if (selected === 'vertex-ai') return { state: 'ready', how: `Google Vertex AI (${path.join(dir, 'settings.json')})` };
      if (selected === 'oauth-personal') {
        return {
          state: 'signed-out',
          how: 'Google stopped serving personal Google sign-ins to Gemini CLI on 2026-06-18; set GEMINI_API_KEY (or use Vertex AI)',
        };
      }
      return { state: 'signed-out', how: 'set GEMINI_API_KEY (personal Google sign-ins are no longer served) or use Vertex AI' };
    }
    case 'copilot': {
      for (const name of ['COPILOT_GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_TOKEN']) if (set(name)) return { state: 'ready', how: `token from ${name}` };
      if (set('COPILOT_PROVIDER_BASE_URL')) return { state: 'ready', how: 'your own model provider (COPILOT_PROVIDER_BASE_URL)' };
      const dir = env.COPILOT_HOME ? expand(env.COPILOT_HOME) : path.join(home, '.copilot');
      const config = file(dir, 'config.json');
      const users = field(config, 'logged_in_users');
      const last = field(field(config, 'last_logged_in_user'), 'login');
      if ((Array.isArray(users) && users.length > 0) || typeof last === 'string') {
        return { state: 'ready', how: `signed in${typeof last === 'string' ? ` as ${last}` : ''} (${path.join(dir, 'config.json')})` };
      }
      return { state: 'signed-out', how: 'run `copilot`, then /login (or set COPILOT_GITHUB_TOKEN)' };
    }
  }
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** A JSON file's value; undefined when it is missing or not JSON (Copilot's config.json may carry `//` comments). */
function readJson(file: string): unknown {
  const text = readText(file);
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    try {
      return JSON.parse(text.replace(/^\s*\/\/.*$/gm, ''));
    } catch {
      return undefined;
    }
  }
}
