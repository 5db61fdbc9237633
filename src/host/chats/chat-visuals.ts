// The visuals of every chat on this host: the list each chat keeps (read from its folder once, then
// held), publishing a page into a chat, giving a fork the pages it keeps, and forgetting them on a clear.
// The rules a page must keep are visuals.ts's; who hears what is HostCore's (passed in). The order of
// the frames is the point of this module: a page goes to the relay (`visual.page`, kept by its outbox)
// before any list names it, so a crash in between leaves a page nobody lists, never a listed visual
// without its page.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ProtocolError } from '../../contracts/errors.ts';
import type { ChatVisual } from '../../contracts/index.ts';
import type { HostEventFrame } from './core.ts';
import { newId } from './session.ts';
import type { ChatStore } from './store.ts';
import { admitVisual, type VisualInput } from './visuals.ts';

export interface ChatVisualsHost {
  store: Pick<ChatStore, 'readVisuals' | 'writeVisuals' | 'writeAttachment' | 'removeAttachment' | 'attachmentDir' | 'removeFiles'>;
  /** To every client that hears all chats (the relay): a page's frame. */
  toAllChats(frame: HostEventFrame): void;
  /** To the clients that hear `chatId` (the relay, and those attached to it): the list. */
  toChat(chatId: string, frame: HostEventFrame): void;
  /**
   * The chat's current life, for a publish to check after its slow write: answers a check that stays
   * true while the chat is neither cleared nor removed. Throws `chat-not-found` for no such chat.
   */
  lifeOf(chatId: string): () => boolean;
}

export class ChatVisuals {
  private readonly lists = new Map<string, ChatVisual[]>();
  private readonly host: ChatVisualsHost;

  constructor(host: ChatVisualsHost) {
    this.host = host;
  }

  of(chatId: string): ChatVisual[] {
    let list = this.lists.get(chatId);
    if (!list) {
      list = this.host.store.readVisuals(chatId);
      this.lists.set(chatId, list);
    }
    return list;
  }

  /** Publishes a self-contained HTML page into a chat (the §12 rules, see visuals.ts), stores it, and tells clients. */
  async publish(chatId: string, input: VisualInput): Promise<ChatVisual> {
    const alive = this.host.lifeOf(chatId);
    const visual = admitVisual(input, newId('visual'), Date.now());
    const page = await this.host.store.writeAttachment(chatId, `${visual.id}.html`, input.html);
    // A clear or a kill while the page was being written took the chat's visuals with it: this one goes too.
    if (!alive()) {
      await this.host.store.removeAttachment(page);
      throw new ProtocolError('chat-not-found', `Chat ${chatId} was cleared or removed while the visual was stored`);
    }
    this.host.toAllChats(pageFrame(chatId, visual.id, input.html));
    await this.replace(chatId, [...this.of(chatId), visual]);
    return visual;
  }

  /**
   * Gives a fork the visuals of `fromChatId` that `keep` picks (their pages were copied with the
   * chat's files): the pages to the relay first, then the list, as a publish does.
   */
  async copy(fromChatId: string, toChatId: string, keep: (visual: ChatVisual) => boolean): Promise<void> {
    const list = this.of(fromChatId).filter(keep);
    if (list.length === 0) return;
    for (const visual of list) {
      let html: string;
      try {
        html = await readFile(path.join(this.host.store.attachmentDir(toChatId), `${visual.id}.html`), 'utf8');
      } catch {
        continue; // its page is gone: the relay keeps whatever it had
      }
      this.host.toAllChats(pageFrame(toChatId, visual.id, html));
    }
    await this.replace(toChatId, list);
  }

  /** Forgets a chat's visuals (clear) and tells clients. */
  async drop(chatId: string): Promise<void> {
    this.lists.set(chatId, []);
    await this.host.store.removeFiles(chatId);
    this.announce(chatId);
  }

  /** Forgets what is held of a chat that is gone (its files go with the chat). */
  forget(chatId: string): void {
    this.lists.delete(chatId);
  }

  private async replace(chatId: string, list: ChatVisual[]): Promise<void> {
    this.lists.set(chatId, list);
    await this.host.store.writeVisuals(chatId, list);
    this.announce(chatId);
  }

  private announce(chatId: string): void {
    this.host.toChat(chatId, { type: 'event', event: 'chat.visuals', payload: { chatId, visuals: this.of(chatId) } });
  }
}

function pageFrame(chatId: string, visualId: string, html: string): HostEventFrame {
  return { type: 'event', event: 'visual.page', payload: { chatId, visualId, html } };
}
