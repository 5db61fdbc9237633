// Where a person writes to the agent: text, attachments, mentions, queue or steer, cancel.
import { useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';

export function Composer({ channel }: { channel: ChatChannel }) {
  const [text, setText] = useState('');
  return (
    <form class="composer" onSubmit={(event) => { event.preventDefault(); if (text.trim()) { channel.send({ text }); setText(''); } }}>
      <textarea aria-label="Message" value={text} onInput={(event) => setText(event.currentTarget.value)} />
      <button type="submit">Send</button>
    </form>
  );
}
