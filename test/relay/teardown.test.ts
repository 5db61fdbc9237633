// The guard that lets a relay test file end only once its Durable Objects are quiet (quiet-objects.ts):
// it must see the events the objects get, or the file's last closes still load when vitest tears down.
import { env } from 'cloudflare:test';
import { expect, it } from 'vitest';
import { countImports, settleObjects } from './quiet-objects.ts';
import { Client, FakeHost } from './peers.ts';

it("counts each Durable Object event it loads, and settles with none pending after sockets closed as a test's last act", async () => {
  const counted = countImports();
  const host = await new FakeHost('h-teardown').connect();
  host.create('c1');
  const link = env.HOST_LINK.get(env.HOST_LINK.idFromName('h-teardown'));
  const before = counted.started;
  expect(await link.isOnline()).toBe(true);
  expect(counted.started).toBeGreaterThan(before);
  // What the file's last test does in many files: close its sockets and end.
  const clients = await Promise.all(Array.from({ length: 20 }, () => Client.chat('h-teardown', 'c1')));
  for (const client of clients) client.close();
  host.disconnect();
  await settleObjects();
  expect(counted.pending).toBe(0);
});
