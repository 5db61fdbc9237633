// Questions the agent asked: one fieldset per question, its choices as radios (or checkboxes where
// several may be picked), and a free answer in words. An answer is the chosen label (labels joined
// for several), or the words typed. An async question (the agent went on without waiting) may be
// dismissed. Like approvals, the form settles when the item does, whoever answered.
import { useId, useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';
import type { ChatQuestion, ChatQuestionItem } from '../../../contracts/index.ts';
import { useAction } from '../tools/action.ts';
import './requests.css';

interface Draft {
  picked: string[];
  other: string;
}

/** The answer a draft gives: the words typed win over a single pick, and join several picks. */
function answerOf(question: ChatQuestion, draft: Draft | undefined): string {
  const other = draft?.other.trim() ?? '';
  const picked = draft?.picked ?? [];
  if (!question.multiSelect) return other || picked[0] || '';
  return [...picked, ...(other ? [other] : [])].join(', ');
}

function QuestionFields({ question, draft, disabled, onChange }: { question: ChatQuestion; draft: Draft; disabled: boolean; onChange(draft: Draft): void }) {
  const name = useId();
  const otherId = useId();
  const toggle = (label: string, on: boolean) => {
    const picked = question.multiSelect ? (on ? [...draft.picked.filter((l) => l !== label), label] : draft.picked.filter((l) => l !== label)) : [label];
    onChange({ picked, other: question.multiSelect ? draft.other : '' });
  };
  return (
    <fieldset class="question" disabled={disabled}>
      <legend>
        {question.header ? <span class="question-header">{question.header}</span> : null}
        <span class="question-text">{question.question}</span>
        {question.multiSelect ? <span class="question-hint"> (pick any)</span> : null}
      </legend>
      <div class="question-choices">
        {question.choices.map((choice) => (
          <label class="choice" key={choice.label}>
            <input
              type={question.multiSelect ? 'checkbox' : 'radio'}
              name={name}
              value={choice.label}
              checked={draft.picked.includes(choice.label) && (question.multiSelect || !draft.other.trim())}
              onChange={(event) => toggle(choice.label, event.currentTarget.checked)}
            />
            <span class="choice-label">{choice.label}</span>
            {choice.description ? <span class="choice-description">{choice.description}</span> : null}
          </label>
        ))}
      </div>
      <label class="question-other" for={otherId}>
        {question.choices.length > 0 ? 'Or answer in your own words' : 'Your answer'}
      </label>
      <input
        id={otherId}
        type="text"
        value={draft.other}
        onInput={(event) => onChange({ picked: question.multiSelect ? draft.picked : [], other: event.currentTarget.value })}
      />
    </fieldset>
  );
}

const SETTLED = { answered: 'Answered', cancelled: 'Cancelled: the agent stopped waiting', dismissed: 'Dismissed' } as const;

export function QuestionForm({ item, channel }: { item: ChatQuestionItem; channel: ChatChannel }) {
  const action = useAction();
  const [drafts, setDrafts] = useState<Record<string, Draft>>({});
  const headingId = useId();
  const pending = item.state === 'pending';
  const answers = Object.fromEntries(item.questions.map((q) => [q.id, answerOf(q, drafts[q.id])]));
  const complete = item.questions.every((q) => answers[q.id] !== '');

  const submit = (event: Event) => {
    event.preventDefault();
    if (!complete) return;
    void action.run('answer', () => channel.request('chat.answer', { chatId: channel.chatId, requestId: item.requestId, answers }));
  };
  const dismiss = () => void action.run('dismiss', () => channel.request('chat.dismiss', { chatId: channel.chatId, itemId: item.id }));

  return (
    <section
      class={`request-card question-card ${pending ? 'pending' : `settled state-${item.state}`}`}
      aria-labelledby={headingId}
      data-request={item.requestId}
    >
      <h3 id={headingId} class="request-title">
        {item.questions.length === 1 ? 'A question for you' : `${item.questions.length} questions for you`}
      </h3>
      {pending ? (
        <form class="question-form" onSubmit={submit}>
          {item.questions.map((question) => (
            <QuestionFields
              key={question.id}
              question={question}
              draft={drafts[question.id] ?? { picked: [], other: '' }}
              disabled={action.busy !== null}
              onChange={(draft) => setDrafts((all) => ({ ...all, [question.id]: draft }))}
            />
          ))}
          <div class="request-actions">
            <button type="submit" class="primary" disabled={!complete || action.busy !== null}>
              Answer
            </button>
            {item.async ? (
              <button type="button" onClick={dismiss} disabled={action.busy !== null}>
                Dismiss
              </button>
            ) : null}
          </div>
        </form>
      ) : (
        <dl class="question-answers">
          {item.questions.map((question) => (
            <div key={question.id}>
              <dt>{question.header || question.question}</dt>
              <dd>{item.answers?.[question.id] ?? '—'}</dd>
            </div>
          ))}
        </dl>
      )}
      <p class="request-state" role="status">
        {action.busy ? 'Sending your answer…' : pending ? '' : SETTLED[item.state as keyof typeof SETTLED]}
      </p>
      {action.error && pending ? (
        <p class="request-error" role="alert">
          {action.error}
        </p>
      ) : null}
    </section>
  );
}
