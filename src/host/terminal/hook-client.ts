// The command a CLI runs for each of its hook events (installed by hooks-file.ts):
//   node hook-client.ts <cli> <host data folder> --tether-hook
// It hands the event the CLI wrote on stdin to the running host over the host's local socket
// (`<data>/hooks.sock`, with the secret in `<data>/hooks.secret`, both the person's own, 0600), waits
// for the host's answer and prints the output the host gives (a permission decision) on stdout.
//
// It never gets in the CLI's way: with no host running, a bad answer, or any failure it prints
// nothing and exits 0, so the CLI goes on as if no hook were installed. It talks to nothing but
// that socket (never the network). Only node: imports, so it starts fast.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';

/** A hook's input is a small JSON object; more than this is not one. */
const INPUT_MAX_BYTES = 1 << 20;
/** An event that is not a permission question gets its answer at once; this only bounds a stuck host. */
const QUICK_MS = 5_000;

/** Shells a CLI may run its hook command through: the CLI is the shell's parent then. */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ash', 'ksh']);

/**
 * The process of the CLI that ran this hook, for the host's liveness check (a CLI killed, or whose
 * terminal closed, never sends SessionEnd): this process's parent, or the parent of the shell the
 * hook ran in. Linux's /proc only; elsewhere none, and the host waits for SessionEnd alone.
 */
function cliPid(): number | undefined {
  try {
    let pid = process.ppid;
    const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    if (SHELLS.has(comm)) {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    }
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

const [cli, dataDir] = process.argv.slice(2);

function done(output?: string): never {
  if (output) process.stdout.write(output);
  process.exit(0);
}

async function readInput(): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > INPUT_MAX_BYTES) done();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function main(): Promise<void> {
  // A CLI the host runs as a chat (hooks-file.ts HOOKS_OFF_VARIABLE): the host hears it through its own protocol.
  if (!cli || !dataDir || process.env.TETHER_HOOKS_OFF === '1') done();
  const input = await readInput();
  let event: unknown;
  try {
    event = JSON.parse(input);
  } catch {
    done();
  }
  let secret: string;
  try {
    secret = readFileSync(path.join(dataDir, 'hooks.secret'), 'utf8').trim();
  } catch {
    done(); // no host has run here
  }
  const blocking = typeof event === 'object' && event !== null && (event as { hook_event_name?: unknown }).hook_event_name === 'PermissionRequest';
  const socket = connect(path.join(dataDir, 'hooks.sock'));
  if (!blocking) setTimeout(() => done(), QUICK_MS).unref();
  socket.on('error', () => done());
  socket.on('connect', () => {
    socket.write(`${JSON.stringify({ secret, cli, event, pid: cliPid() })}\n`);
  });
  let answer = '';
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString('utf8');
    if (answer.length > INPUT_MAX_BYTES) done();
    const newline = answer.indexOf('\n');
    if (newline < 0) return;
    try {
      const reply = JSON.parse(answer.slice(0, newline)) as { output?: unknown };
      done(typeof reply.output === 'object' && reply.output !== null ? JSON.stringify(reply.output) : undefined);
    } catch {
      done();
    }
  });
  socket.on('close', () => done());
}

main().catch(() => done());
