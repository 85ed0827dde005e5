import { readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { parse, stringify } from 'yaml';
import { benchBot } from '../harness/bench-bot';
import { sleep, type BenchContext } from '../harness/bench-context';
import { rssBytes } from '../harness/proc-stats';
import { deleteKeys } from '../harness/redis-target';
import { RelaygramInstall, secret, type AppProcess } from '../harness/relaygram-install';
import { failedRow, firstLine, row } from '../report/results';

const SECTION = '7 broadcast';
const CLIENT = 'notifier';
/** The bot's budget and the emulator's per-bot limit: issue 16's acceptance run. */
const PER_SECOND = 2_000;
const SHARE = 0.8;
const BUDGET = PER_SECOND * SHARE;
const FIRST_CHAT = 5_000_000;
const MB = 2 ** 20;

/** What the emulator counted of the broadcast (emulator.child.ts). */
interface Counts {
  bins: number[];
  /** When the first send reached the emulator (its clock: this machine's). */
  firstAt?: number;
  sent: number;
  blocked: number;
  limited: number;
}

/** One broadcast as the run saw it. */
interface Run {
  uploadSeconds: number;
  /** Bins (100 ms, from the first send) from the pause to 1 s after the resume. */
  pausedBins: [number, number];
  /** Sends that reached the emulator between 1 s and 3 s after the pause. */
  sentWhilePaused: number;
  counts: Counts;
  listedBlocked: number;
  /** Dispatcher RSS once 10 % were sent, and its highest after. */
  rssEarly: number;
  rssPeak: number;
}

/**
 * Section 7: a broadcast to 100,000 recipients (20,000 quick) through a gateway and
 * a dispatcher, the bot's `per_second` and the emulator's per-bot limit at 2,000 and
 * `broadcast_share` 0.8: the send rate on the emulator's clock against that 1,600/s
 * share, a pause and a resume in the middle, a tenth of the recipients answering 403
 * and listed, and the dispatcher's RSS from early on to the end.
 */
export async function broadcastBench(ctx: BenchContext): Promise<void> {
  const total = ctx.options.quick ? 20_000 : 100_000;
  const name = `broadcast to ${total.toLocaleString('en')}: send rate`;
  const prefix = `${ctx.runPrefix}-broadcast`;
  const token = secret();
  let install: RelaygramInstall | undefined;
  try {
    install = new RelaygramInstall(
      prefix,
      ctx.redis.url,
      ctx.emulator.apiRoot,
      benchBot(ctx),
      // No update is delivered here; a route keeps the config as an operator's would be.
      [{ name: 'unused', targetUrl: 'http://127.0.0.1:9/', ordering: 'chat' }],
      [{ name: CLIENT, token }],
    );
    allowBroadcasts(install.configPath);
    const gateway = await install.start('gateway', ctx.options.launch, 'gateway-broadcast');
    const dispatcher = await install.start(
      'dispatcher',
      ctx.options.launch,
      'dispatcher-broadcast',
    );
    const run = await broadcast(ctx, gateway, dispatcher, token, total);
    report(ctx, name, total, run);
  } catch (error) {
    ctx.rows.push(
      failedRow(
        { section: SECTION, name, unit: '/s', target: { kind: 'ratio-at-least', min: 0.9 } },
        firstLine(error),
      ),
    );
  } finally {
    await ctx.emulator.child
      .call('broadcastCounts', { botId: ctx.emulator.bot.id, end: true })
      .catch(() => undefined);
    await install?.close();
    await deleteKeys(ctx.redis.client, prefix);
  }
}

/** The bot's budgets raised, and the client allowed to broadcast. */
function allowBroadcasts(configPath: string): void {
  const config = parse(readFileSync(configPath, 'utf8')) as {
    bots: Record<string, unknown>[];
    clients: Record<string, unknown>[];
  };
  for (const bot of config.bots) bot.outbound = { per_second: PER_SECOND, broadcast_share: SHARE };
  for (const client of config.clients) client.broadcast = true;
  writeFileSync(configPath, stringify(config));
}

async function broadcast(
  ctx: BenchContext,
  gateway: AppProcess,
  dispatcher: AppProcess,
  token: string,
  total: number,
): Promise<Run> {
  const text = `bench-${randomBytes(4).toString('hex')}`;
  const chats = Array.from({ length: total }, (_, i) => FIRST_CHAT + i);
  const blocked = chats.filter((_, i) => i % 10 === 9);
  const botId = ctx.emulator.bot.id;
  await ctx.emulator.child.call('watchBroadcast', { botId, perSecond: PER_SECOND, blocked, text });
  const base = `${gateway.url}/api/v1/bench-bot/broadcasts`;
  const headers = { 'x-service-token': token, 'content-type': 'application/json' };
  const counts = () => ctx.emulator.child.call<Counts>('broadcastCounts', { botId });

  ctx.log(`broadcast: ${total} recipients at ${BUDGET}/s`);
  const uploadStart = performance.now();
  const posted = await request(base, {
    method: 'POST',
    headers,
    body: JSON.stringify({ method: 'sendMessage', params: { text }, chat_ids: chats }),
  });
  const answer = (await posted.body.json()) as { id?: string; error?: string };
  if (posted.statusCode !== 202 || !answer.id) {
    throw new Error(`POST answered ${posted.statusCode}: ${answer.error ?? ''}`);
  }
  const uploadSeconds = (performance.now() - uploadStart) / 1000;
  const url = `${base}/${answer.id}`;
  const post = async (action: string) => {
    const res = await request(`${url}/${action}`, { method: 'POST', headers });
    if (res.statusCode !== 200) throw new Error(`${action} answered ${res.statusCode}`);
    await res.body.dump();
  };

  const rssEarly = await untilSettled(counts, total * 0.1, () => rssBytes(dispatcher.pid) ?? 0);
  let rssPeak = rssEarly;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, rssBytes(dispatcher.pid) ?? 0);
  }, 500);
  try {
    await untilSettled(counts, total * 0.4, () => 0);
    await post('pause');
    const pausedAt = Date.now();
    await sleep(1_000);
    const oneSecondIn = (await counts()).sent;
    await sleep(2_000);
    const sentWhilePaused = (await counts()).sent - oneSecondIn;
    await post('resume');
    const resumedAt = Date.now();
    await waitDone(url, headers, Date.now() + (total / BUDGET) * 3_000 + 60_000);
    const done = await counts();
    const listed = await request(`${url}/failures?reason=blocked&limit=1`, { headers });
    const { total: listedBlocked } = (await listed.body.json()) as { total: number };
    return {
      uploadSeconds,
      pausedBins: [
        Math.floor((pausedAt - (done.firstAt ?? 0)) / 100),
        Math.ceil((resumedAt - (done.firstAt ?? 0)) / 100) + 10,
      ],
      sentWhilePaused,
      counts: done,
      listedBlocked,
      rssEarly,
      rssPeak,
    };
  } finally {
    clearInterval(sampler);
  }
}

/** Waits until `settled` recipients reached the emulator; then `read()`. */
async function untilSettled(
  counts: () => Promise<Counts>,
  settled: number,
  read: () => number,
): Promise<number> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const c = await counts();
    if (c.sent + c.blocked >= settled) return read();
    if (Date.now() > deadline) throw new Error(`only ${c.sent + c.blocked} sends in 300 s`);
    await sleep(200);
  }
}

async function waitDone(url: string, headers: Record<string, string>, deadline: number) {
  for (;;) {
    const res = await request(url, { headers });
    const view = (await res.body.json()) as { status?: string; pending?: number };
    if (view.status === 'done') return;
    if (Date.now() > deadline) throw new Error(`still ${view.status}, ${view.pending} pending`);
    await sleep(500);
  }
}

/** Sends per second over whole seconds of sending: the first and last left out, and the pause. */
function steadyRates(bins: readonly number[], [pauseFrom, pauseTo]: [number, number]): number[] {
  const rates: number[] = [];
  for (let start = 10; start + 20 <= bins.length; start += 10) {
    if (start + 10 > pauseFrom && start < pauseTo) continue;
    rates.push(bins.slice(start, start + 10).reduce((a, b) => a + b, 0));
  }
  return rates;
}

function report(ctx: BenchContext, name: string, total: number, run: Run): void {
  const rates = steadyRates(run.counts.bins, run.pausedBins);
  const mean = rates.length ? rates.reduce((a, b) => a + b, 0) / rates.length : undefined;
  const fastest = rates.length ? Math.max(...rates) : undefined;
  const base = { section: SECTION, baseline: BUDGET, baselineName: 'broadcast share' };
  ctx.log(`broadcast: ${Math.round(mean ?? 0)}/s, fastest second ${fastest ?? '?'}`);
  ctx.rows.push(
    row({
      ...base,
      name,
      unit: '/s',
      value: mean,
      target: { kind: 'ratio-at-least', min: 0.9 },
      note: `${rates.length} whole seconds of sending (Telegram's clock)`,
    }),
    row({
      ...base,
      name: 'broadcast: fastest second',
      unit: '/s',
      value: fastest,
      target: { kind: 'ratio-at-most', max: 1.05 },
    }),
    row({
      section: SECTION,
      name: 'broadcast: 403 recipients listed as blocked',
      unit: '',
      value: run.listedBlocked,
      target: { kind: 'at-least', min: total / 10, unit: 'recipients' },
      note: `${run.counts.blocked} answered 403, ${run.counts.sent} sent, ${run.counts.limited} refused 429 by Telegram's limits`,
    }),
    row({
      section: SECTION,
      name: 'broadcast: sends 1-3 s after the pause',
      unit: '',
      value: run.sentWhilePaused,
      target: { kind: 'at-most', max: 0, unit: 'sends' },
    }),
    row({
      section: SECTION,
      name: 'broadcast: dispatcher RSS growth after 10 %',
      unit: 'MB',
      value: (run.rssPeak - run.rssEarly) / MB,
      target: { kind: 'at-most', max: 15, unit: 'MB' },
      note: `${Math.round(run.rssEarly / MB)} MB at 10 %, ${Math.round(run.rssPeak / MB)} MB at most after`,
    }),
    row({
      section: SECTION,
      name: `broadcast: upload of ${total.toLocaleString('en')} recipients`,
      unit: 's',
      value: run.uploadSeconds,
    }),
  );
  ctx.details.broadcast = { total, rates, ...run, counts: { ...run.counts, bins: undefined } };
}
