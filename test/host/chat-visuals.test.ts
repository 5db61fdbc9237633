// The visuals of a host's chats (chat-visuals.ts) without a HostCore: the order of the frames (the page
// before any list names it), a chat cleared while its page was being written, a fork's copy.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatVisual } from '../../src/contracts/index.ts';
import { ChatVisuals, type ChatVisualsHost } from '../../src/host/chats/chat-visuals.ts';
import type { HostEventFrame } from '../../src/host/chats/core.ts';

function setup() {
  const root = mkdtempSync(path.join(tmpdir(), 'tether-visuals-'));
  const said: string[] = [];
  const written = new Map<string, ChatVisual[]>();
  const removed: string[] = [];
  let pageWritten: () => void = () => undefined;
  let holdPages = false;
  let alive = true;
  const host: ChatVisualsHost = {
    store: {
      readVisuals: () => [],
      writeVisuals: async (chatId, list) => {
        said.push(`write ${chatId} ${list.length}`);
        written.set(chatId, list);
      },
      writeAttachment: async (chatId, fileName) => {
        if (holdPages)
          await new Promise<void>((resolve) => {
            pageWritten = resolve;
          });
        return path.join(root, chatId, fileName);
      },
      removeAttachment: async (file) => {
        removed.push(file);
      },
      attachmentDir: (chatId) => path.join(root, chatId),
      removeFiles: async (chatId) => {
        said.push(`removeFiles ${chatId}`);
      },
    },
    toAllChats: (frame: HostEventFrame) => said.push(`all ${frame.event} ${(frame.payload as { chatId: string }).chatId}`),
    toChat: (chatId, frame) => said.push(`chat ${chatId} ${frame.event} ${(frame.payload as { visuals: unknown[] }).visuals.length}`),
    lifeOf: () => () => alive,
  };
  return {
    visuals: new ChatVisuals(host),
    said,
    written,
    removed,
    root,
    hold: () => {
      holdPages = true;
    },
    release: () => pageWritten(),
    clear: () => {
      alive = false;
    },
  };
}

const page = { title: 'A chart', html: '<!doctype html><p>hi</p>' };

describe("a chat's visuals", () => {
  it('a published page goes to the relay before the list that names it is written and sent', async () => {
    const { visuals, said, written } = setup();
    const visual = await visuals.publish('c1', page);
    expect(said).toEqual(['all visual.page c1', 'write c1 1', 'chat c1 chat.visuals 1']);
    expect(written.get('c1')).toEqual([visual]);
    expect(visuals.of('c1')).toEqual([visual]);
  });

  it('a page whose chat was cleared while it was written is removed and refused, and nothing is sent', async () => {
    const { visuals, said, removed, hold, release, clear, root } = setup();
    hold();
    const publishing = visuals.publish('c1', page);
    // One turn of the event loop, no time: the publish gets to its held write before the chat is cleared.
    await new Promise((resolve) => setTimeout(resolve, 0));
    clear();
    release();
    await expect(publishing).rejects.toMatchObject({ code: 'chat-not-found' });
    expect(removed).toHaveLength(1);
    expect(removed[0]!.startsWith(path.join(root, 'c1'))).toBe(true);
    expect(said).toEqual([]);
    expect(visuals.of('c1')).toEqual([]);
  });

  it('a fork gets the kept visuals whose page was copied; a page that is gone is not sent again, its entry still listed', async () => {
    const { visuals, said, root } = setup();
    const kept = await visuals.publish('c1', { ...page, title: 'kept' });
    const lost = await visuals.publish('c1', { ...page, title: 'page gone' });
    await visuals.publish('c1', { ...page, title: 'left out' });
    said.length = 0;
    mkdirSync(path.join(root, 'fork'), { recursive: true });
    writeFileSync(path.join(root, 'fork', `${kept.id}.html`), page.html);
    await visuals.copy('c1', 'fork', (v) => v.id === kept.id || v.id === lost.id);
    expect(said).toEqual(['all visual.page fork', 'write fork 2', 'chat fork chat.visuals 2']);
    expect(visuals.of('fork').map((v) => v.title)).toEqual(['kept', 'page gone']);
  });

  it('a clear empties the list, removes the files and says so', async () => {
    const { visuals, said } = setup();
    await visuals.publish('c1', page);
    said.length = 0;
    await visuals.drop('c1');
    expect(said).toEqual(['removeFiles c1', 'chat c1 chat.visuals 0']);
    expect(visuals.of('c1')).toEqual([]);
  });
});
