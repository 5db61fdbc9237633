// `usage.summary` from the scanner's entries: buckets by hour or day in the asked time zone, per
// model and per project folder, with distinct sessions and cost from the shipped price table.
// Entries sit in 15-minute UTC slots; each slot is placed in the zone once per summary.
import path from 'node:path';
import { ProtocolError } from '../../contracts/errors.ts';
import type {
  UsageAccount,
  UsageBucket,
  UsageModel,
  UsageProject,
  UsageProvider,
  UsageSummaryPayload,
  UsageSummaryResult,
  UsageTotals,
} from '../../contracts/index.ts';
import { totalTokensOf } from '../../contracts/index.ts';
import { cacheSavingsOf, costOf, priceOf, PRICED_MODELS, PRICES_DATE } from './prices.ts';
import type { Entry, ScanOutcome, TotalsArray } from './scanner.ts';
import { SLOT_MS } from './scanner.ts';

/** Which account a root's files belong to. */
export interface RootOwner {
  account: string;
  provider: UsageProvider;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The zone's calendar: a slot's day and hour start, `bad-request` for a zone this machine does not know. */
function zoneCalendar(timeZone: string): (slot: number) => { day: string; hour: string } {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
  } catch {
    throw new ProtocolError('bad-request', `Unknown time zone: ${timeZone.slice(0, 64)}`);
  }
  const cache = new Map<number, { day: string; hour: string }>();
  return (slot) => {
    let found = cache.get(slot);
    if (found) return found;
    const at = slot * SLOT_MS;
    const parts: Record<string, string> = {};
    for (const part of format.formatToParts(at)) parts[part.type] = part.value;
    const day = `${parts.year}-${parts.month}-${parts.day}`;
    const hh = parts.hour === '24' ? '00' : parts.hour;
    // The zone's offset at this moment, from the wall clock it shows.
    const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(hh), Number(parts.minute));
    const offset = Math.round((wall - at) / 60_000);
    const sign = offset < 0 ? '-' : '+';
    const abs = Math.abs(offset);
    const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
    found = { day, hour: `${day}T${hh}:00:00${zone}` };
    cache.set(slot, found);
    return found;
  };
}

const zero = (): TotalsArray => [0, 0, 0, 0, 0, 0, 0];
function add(into: TotalsArray, from: TotalsArray): void {
  for (let i = 0; i < 7; i += 1) into[i] += from[i];
}
function totalsOf(t: TotalsArray): UsageTotals {
  return { calls: t[0], input: t[1], cacheRead: t[2], cacheWrite: t[3], cacheWrite1h: t[4], output: t[5], reasoning: t[6] };
}

export interface SummaryInput {
  payload: UsageSummaryPayload;
  entries: Iterable<Entry>;
  /** The root of each file id (files of roots no longer configured are left out). */
  rootOf: (fileId: number) => string | undefined;
  owners: ReadonlyMap<string, RootOwner>;
  accounts: readonly UsageAccount[];
  scan: ScanOutcome & { running: boolean };
}

export function summarize(input: SummaryInput): UsageSummaryResult {
  const { payload } = input;
  if (!DAY.test(payload.from) || !DAY.test(payload.to)) throw new ProtocolError('bad-request', 'from and to are days: YYYY-MM-DD');
  if (payload.from > payload.to) throw new ProtocolError('bad-request', 'from is after to');
  const calendar = zoneCalendar(payload.timeZone);
  const only = payload.accounts ? new Set(payload.accounts) : null;
  const split = only !== null;

  const buckets = new Map<string, { slot: string; provider: UsageProvider; model: string; account?: string; totals: TotalsArray; sessions: Set<string> }>();
  const models = new Map<string, { provider: UsageProvider; model: string; account?: string; totals: TotalsArray }>();
  const projects = new Map<string, Map<string, { provider: UsageProvider; model: string; totals: TotalsArray }>>();
  const sessions = new Set<string>();

  for (const entry of input.entries) {
    const root = input.rootOf(entry.file);
    const owner = root !== undefined ? input.owners.get(root) : undefined;
    if (!owner || (only && !only.has(owner.account))) continue;
    const when = calendar(entry.slot);
    if (when.day < payload.from || when.day > payload.to) continue;
    const slot = payload.resolution === 'day' ? when.day : when.hour;
    const account = split ? owner.account : undefined;
    const session = `${owner.provider}\0${entry.session}`;
    sessions.add(session);

    const bucketKey = `${slot}\0${owner.provider}\0${entry.model}\0${account ?? ''}`;
    let bucket = buckets.get(bucketKey);
    if (!bucket) {
      bucket = { slot, provider: owner.provider, model: entry.model, ...(account ? { account } : {}), totals: zero(), sessions: new Set() };
      buckets.set(bucketKey, bucket);
    }
    add(bucket.totals, entry.totals);
    bucket.sessions.add(session);

    const modelKey = `${owner.provider}\0${entry.model}\0${account ?? ''}`;
    let model = models.get(modelKey);
    if (!model) {
      model = { provider: owner.provider, model: entry.model, ...(account ? { account } : {}), totals: zero() };
      models.set(modelKey, model);
    }
    add(model.totals, entry.totals);

    let project = projects.get(entry.folder);
    if (!project) projects.set(entry.folder, (project = new Map()));
    const perModel = `${owner.provider}\0${entry.model}`;
    let part = project.get(perModel);
    if (!part) project.set(perModel, (part = { provider: owner.provider, model: entry.model, totals: zero() }));
    add(part.totals, entry.totals);
  }

  const cost = (provider: UsageProvider, model: string, totals: UsageTotals): number | null => {
    const { price } = priceOf(provider, model);
    return price ? costOf(totals, price) : null;
  };

  const bucketList: UsageBucket[] = [...buckets.values()].map((b) => {
    const totals = totalsOf(b.totals);
    const { price } = priceOf(b.provider, b.model);
    return {
      slot: b.slot,
      provider: b.provider,
      model: b.model,
      totals,
      costUsd: price ? costOf(totals, price) : null,
      cacheSavingsUsd: price ? cacheSavingsOf(totals, price) : 0,
      sessions: b.sessions.size,
      ...(b.account ? { account: b.account } : {}),
    };
  });
  bucketList.sort((a, b) => (a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model)));

  const modelList: UsageModel[] = [...models.values()].map((m) => {
    const totals = totalsOf(m.totals);
    const match = priceOf(m.provider, m.model);
    return {
      provider: m.provider,
      model: m.model,
      totals,
      costUsd: match.price ? costOf(totals, match.price) : null,
      priceBasis: match.basis,
      pricedAs: match.pricedAs,
      ...(m.account ? { account: m.account } : {}),
    };
  });
  modelList.sort((a, b) => (b.costUsd ?? -1) - (a.costUsd ?? -1) || a.model.localeCompare(b.model));

  const projectList: UsageProject[] = [...projects].map(([folder, parts]) => {
    const all = zero();
    const byProvider: UsageProject['byProvider'] = {};
    let total = 0;
    let unpriced = 0;
    for (const part of parts.values()) {
      add(all, part.totals);
      const totals = totalsOf(part.totals);
      const tokens = totalTokensOf(totals);
      const usd = cost(part.provider, part.model, totals);
      const mine = (byProvider[part.provider] ??= { costUsd: 0, tokens: 0, unpricedTokens: 0 });
      mine.tokens += tokens;
      // An unknown price adds nothing to the cost, which cannot be null here; its tokens are named
      // instead, so a client never shows a project that ran on an unpriced model as free.
      if (usd === null) {
        unpriced += tokens;
        mine.unpricedTokens = (mine.unpricedTokens ?? 0) + tokens;
      } else {
        total += usd;
        mine.costUsd += usd;
      }
    }
    return {
      folder,
      name: folder ? path.basename(folder) || folder : '(no folder)',
      projectId: null,
      byProvider,
      totals: totalsOf(all),
      costUsd: total,
      unpricedTokens: unpriced,
    };
  });
  projectList.sort((a, b) => b.costUsd - a.costUsd || a.folder.localeCompare(b.folder));

  const { scan } = input;
  return {
    from: payload.from,
    to: payload.to,
    resolution: payload.resolution,
    timeZone: payload.timeZone,
    buckets: bucketList,
    models: modelList,
    projects: projectList,
    sessions: sessions.size,
    scan: { at: scan.at, files: scan.files, changedFiles: scan.changedFiles, durationMs: scan.durationMs, running: scan.running, failed: scan.failed },
    pricing: { source: 'snapshot', fetchedAt: Date.parse(`${PRICES_DATE}T00:00:00Z`), models: PRICED_MODELS },
    rate: null,
    roots: scan.roots,
    unpricedTokens: bucketList.reduce((n, b) => (b.costUsd === null ? n + totalTokensOf(b.totals) : n), 0),
    ...(split ? { accounts: input.accounts.filter((a) => only!.has(a.id)) } : {}),
  };
}
