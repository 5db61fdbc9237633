// Where a person writes to the agent: text, files (within the contract's limits, images previewed),
// `@` file mentions and `$` skills where the CLI takes them, and, while a turn runs, whether the
// message waits for it (queue) or goes into it (steer), plus the way to stop it, on one line with what
// the agent is doing. Above it: the chat's queue and the messages from here still on their way (SendList).
import { useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';
import type { ChatDelivery, ChatQueuedMessage, ChatSkill } from '../../../contracts/index.ts';
import { hostConnection } from '../../app/session.ts';
import { useAction } from '../tools/action.ts';
import { chatCapabilities } from '../tools/capabilities.ts';
import { useThread } from '../tools/live.ts';
import { Icon } from '../../app/icons.tsx';
import { addFiles, formatBytes, releasePreviews, toUploads, type Attached } from './attachments.ts';
import { knownFiles, namedIn, pick, suggest, tokenAt, type Token } from './mentions.ts';
import { QueueList } from './QueueList.tsx';
import { SendList } from './SendList.tsx';
import './composer.css';
import './skills.css';

/** A phone's Enter makes a new line; a keyboard's sends (Shift+Enter for a new line). */
const enterSends = () => !matchMedia('(pointer: coarse)').matches;

/**
 * The skills the chat's CLI would load (`skills.list`: user, project and plugin folders as that CLI
 * reads them), asked once per chat when someone first types `$`: they depend on the chat's folder,
 * CLI and account, so two chats on one host may differ. A failed ask is forgotten, to ask again.
 */
const skillLists = new Map<string, Promise<ChatSkill[]>>();
function chatSkills(channel: ChatChannel): Promise<ChatSkill[]> {
  const key = `${channel.hostId}/${channel.chatId}`;
  let list = skillLists.get(key);
  if (!list) {
    list = hostConnection(channel.hostId)
      .request('skills.list', { chatId: channel.chatId })
      .then(
        (result) => result.skills,
        () => {
          skillLists.delete(key);
          return [];
        },
      );
    skillLists.set(key, list);
  }
  return list;
}

const SKILL_SOURCE: Record<ChatSkill['source'], string> = { user: 'yours', project: 'this project', plugin: 'plugin' };

export function Composer({ channel }: { channel: ChatChannel }) {
  const thread = useThread(channel, ['info', 'snapshot']);
  const capabilities = chatCapabilities(channel);
  const stop = useAction();
  const [text, setText] = useState('');
  const [attached, setAttached] = useState<Attached[]>([]);
  const [notice, setNotice] = useState<string | null>(null);
  const [delivery, setDelivery] = useState<ChatDelivery>('queue');
  const [token, setToken] = useState<Token | null>(null);
  const [active, setActive] = useState(0);
  const [skills, setSkills] = useState<ChatSkill[] | null>(null);
  const [preparing, setPreparing] = useState(false);
  const input = useRef<HTMLTextAreaElement>(null);
  const files = useRef<HTMLInputElement>(null);
  const listId = useId();
  const noticeId = useId();

  const info = thread.info;
  const running = Boolean(info && info.activeTurnId !== null);
  // The agent at work: a turn, or a status of running without one (work it started itself).
  const working = running || info?.status === 'running';
  const takesFiles = capabilities?.attachments !== false;
  const takesMentions = capabilities?.mentions === true;
  const skillNames = useMemo(() => [...new Set([...(skills ?? []).map((skill) => skill.name), ...(info?.skills ?? [])])], [info?.skills, skills]);
  const skillByName = useMemo(() => new Map((skills ?? []).map((skill) => [skill.name, skill])), [skills]);

  // Previews still shown when the view closes are let go with it.
  const shown = useRef(attached);
  shown.current = attached;
  useEffect(() => () => releasePreviews(shown.current), []);

  const options = useMemo(() => {
    if (!token) return [];
    if (token.trigger === '@') return takesMentions ? suggest(knownFiles(thread.items), token.query) : [];
    return suggest(skillNames, token.query);
  }, [token, takesMentions, skillNames, thread]);
  const open = options.length > 0;

  const readToken = (value: string, caret: number) => {
    const next = tokenAt(value, caret);
    setToken(next);
    setActive(0);
    if (next?.trigger === '$' && skills === null) void chatSkills(channel).then(setSkills);
  };

  const choose = (value: string) => {
    if (!token) return;
    const next = pick(text, token, value);
    setText(next.text);
    setToken(null);
    requestAnimationFrame(() => {
      input.current?.focus();
      input.current?.setSelectionRange(next.caret, next.caret);
    });
  };

  const attach = (list: Iterable<File>) => {
    const { attached: next, refused } = addFiles(attached, list);
    setAttached(next);
    setNotice(refused);
  };
  const detach = (key: string) => {
    releasePreviews(attached.filter((a) => a.key === key));
    setAttached(attached.filter((a) => a.key !== key));
    setNotice(null);
  };

  const send = async () => {
    if (preparing || (!text.trim() && attached.length === 0)) return;
    setPreparing(true);
    try {
      const uploads = attached.length > 0 ? await toUploads(attached) : undefined;
      const named = namedIn(text, skillNames);
      channel.clearSettled();
      channel.send({
        text,
        ...(running ? { delivery } : {}),
        ...(takesMentions && named.mentions.length > 0 ? { mentions: named.mentions } : {}),
        ...(named.skills.length > 0 ? { skills: named.skills } : {}),
        ...(uploads ? { attachments: uploads } : {}),
      });
      releasePreviews(attached);
      setAttached([]);
      setText('');
      setNotice(null);
      setToken(null);
    } catch (error) {
      setNotice(`The files could not be read: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      setPreparing(false);
    }
  };

  const edit = (message: ChatQueuedMessage) => {
    setText((current) => (current.trim() ? `${message.text}\n\n${current}` : message.text));
    if (message.attachments?.length) setNotice(`Its ${message.attachments.length} attached file(s) stay on the host; attach them again to send them.`);
    input.current?.focus();
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (open) {
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        setActive((i) => (i + (event.key === 'ArrowDown' ? 1 : options.length - 1)) % options.length);
        return;
      }
      if (event.key === 'Enter' || event.key === 'Tab') {
        event.preventDefault();
        choose(options[active]!);
        return;
      }
      if (event.key === 'Escape') {
        event.preventDefault();
        setToken(null);
        return;
      }
    }
    if (event.key === 'Enter' && !event.isComposing && (event.ctrlKey || event.metaKey || (!event.shiftKey && enterSends()))) {
      event.preventDefault();
      void send();
    }
  };

  return (
    <div class="composer-area">
      <QueueList channel={channel} onEdit={edit} />
      <SendList channel={channel} />
      <form
        class="composer"
        aria-label="Write a message"
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
        onDragOver={(event) => {
          if (takesFiles) event.preventDefault();
        }}
        onDrop={(event) => {
          if (takesFiles && event.dataTransfer?.files.length) {
            event.preventDefault();
            attach(event.dataTransfer.files);
          }
        }}
      >
        {attached.length > 0 ? (
          <ul class="composer-files" aria-label="Attached files">
            {attached.map((a) => (
              <li key={a.key} class="composer-file">
                {a.preview ? (
                  <img src={a.preview} alt={`Preview of ${a.file.name}`} />
                ) : (
                  <span class="composer-file-icon" aria-hidden="true">
                    {a.file.name.split('.').pop()?.slice(0, 4).toUpperCase() || 'FILE'}
                  </span>
                )}
                <span class="composer-file-name">{a.file.name}</span>
                <span class="composer-file-size">{formatBytes(a.file.size)}</span>
                <button type="button" class="link" aria-label={`Remove ${a.file.name}`} onClick={() => detach(a.key)}>
                  <Icon name="close" size={16} />
                </button>
              </li>
            ))}
          </ul>
        ) : null}
        {notice ? (
          <p class="composer-notice" id={noticeId} role="alert">
            {notice}
          </p>
        ) : null}
        <div class="composer-row">
          {takesFiles ? (
            <>
              <button type="button" class="composer-attach" aria-label="Attach files" onClick={() => files.current?.click()}>
                <Icon name="attach" size={20} />
              </button>
              <input
                ref={files}
                type="file"
                multiple
                hidden
                tabIndex={-1}
                onChange={(event) => {
                  const list = event.currentTarget.files;
                  if (list) attach([...list]);
                  event.currentTarget.value = '';
                }}
              />
            </>
          ) : null}
          <div class="composer-input">
            <textarea
              ref={input}
              rows={1}
              aria-label="Message"
              placeholder={running ? 'Message (while it works)' : 'Message'}
              role="combobox"
              aria-autocomplete="list"
              aria-expanded={open}
              aria-controls={listId}
              aria-activedescendant={open ? `${listId}-${active}` : undefined}
              aria-describedby={notice ? noticeId : undefined}
              value={text}
              onInput={(event) => {
                const el = event.currentTarget;
                setText(el.value);
                readToken(el.value, el.selectionStart ?? el.value.length);
              }}
              onKeyDown={onKeyDown}
              onClick={(event) => readToken(event.currentTarget.value, event.currentTarget.selectionStart ?? 0)}
              onBlur={() => setTimeout(() => setToken(null), 150)}
              onPaste={(event) => {
                const pasted = [...(event.clipboardData?.files ?? [])];
                if (takesFiles && pasted.length > 0) {
                  event.preventDefault();
                  attach(pasted);
                }
              }}
            />
            <ul id={listId} role="listbox" class="suggestions" aria-label={token?.trigger === '$' ? 'Skills' : 'Files'} hidden={!open}>
              {options.map((option, i) => (
                <li
                  key={option}
                  id={`${listId}-${i}`}
                  role="option"
                  aria-selected={i === active}
                  class={i === active ? 'active' : ''}
                  onMouseDown={(event) => {
                    event.preventDefault();
                    choose(option);
                  }}
                >
                  {token?.trigger}
                  {option}
                  {token?.trigger === '$' && skillByName.has(option) ? <SkillFacts skill={skillByName.get(option)!} /> : null}
                </li>
              ))}
            </ul>
          </div>
          <button type="submit" class="primary composer-send" disabled={preparing || (!text.trim() && attached.length === 0)}>
            {running && delivery === 'steer' ? 'Steer' : running ? 'Queue' : 'Send'}
          </button>
        </div>
        {working ? (
          <div class="composer-running">
            <span class="composer-status" role="status">
              <span class="working-dots" aria-hidden="true" />
              {info?.status === 'needs-you' ? 'Waiting for you' : 'Working…'}
            </span>
            {running ? (
              <fieldset class="delivery">
                <legend class="visually-hidden">While the agent works</legend>
                <label>
                  <input
                    type="radio"
                    name={`${listId}-delivery`}
                    aria-label="Queue for after this turn"
                    checked={delivery === 'queue'}
                    onChange={() => setDelivery('queue')}
                  />
                  Queue
                </label>
                <label>
                  <input
                    type="radio"
                    name={`${listId}-delivery`}
                    aria-label="Steer this turn"
                    checked={delivery === 'steer'}
                    onChange={() => setDelivery('steer')}
                  />
                  Steer
                </label>
              </fieldset>
            ) : null}
            {running ? (
              <button
                type="button"
                class="danger composer-stop"
                disabled={stop.busy !== null}
                onClick={() => void stop.run('cancel', () => channel.request('chat.cancel', { chatId: channel.chatId }))}
              >
                {stop.busy ? 'Stopping…' : 'Stop'}
              </button>
            ) : null}
          </div>
        ) : (
          <span class="composer-status" role="status" />
        )}
        {stop.error ? (
          <p class="request-error" role="alert">
            {stop.error}
          </p>
        ) : null}
      </form>
    </div>
  );
}

/** A skill's description and where it comes from, beside its name in the `$` menu. */
function SkillFacts({ skill }: { skill: ChatSkill }) {
  return (
    <>
      <span class="skill-source"> · {SKILL_SOURCE[skill.source]}</span>
      {skill.description ? <span class="skill-description">{skill.description}</span> : null}
    </>
  );
}
