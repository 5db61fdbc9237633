// Questions the agent asked: choices, multi-select, free text; async ones may be dismissed.
import type { ChatQuestionItem } from '../../../contracts/index.ts';
import type { ChatChannel } from '../../../client/index.ts';

export function QuestionForm({ item }: { item: ChatQuestionItem; channel: ChatChannel }) {
  return (
    <section class="question-form" aria-label="Question">
      {item.questions.map((q) => <p key={q.id}>{q.question}</p>)}
      <p>{item.state}</p>
    </section>
  );
}
