// One item drawn by its kind. Requests (approvals, questions) are W3's cards; everything else lives
// in this folder. `ItemRow` is what the list draws per row: memoized on its item (the thread replaces
// an item's object when it changes) and a revision (bumped when work nested under a subagent
// changes), so an event redraws the one row it touched.
import { memo } from 'preact/compat';
import { useContext } from 'preact/hooks';
import type { ChatItem, ChatVisual } from '../../../contracts/index.ts';
import { ApprovalCard } from '../requests/ApprovalCard.tsx';
import { QuestionForm } from '../requests/QuestionForm.tsx';
import { VisualFrame } from '../visuals/VisualFrame.tsx';
import { AssistantMessage, Compaction, Note, Thinking, UserMessage } from './Messages.tsx';
import { ThreadScopeContext } from './scope.ts';
import { Subagent } from './Subagent.tsx';
import { ToolCall } from './ToolCall.tsx';
import { TurnFooter } from './TurnFooter.tsx';

export function ItemBody({ item }: { item: ChatItem }) {
  const scope = useContext(ThreadScopeContext)!;
  switch (item.kind) {
    case 'user':
      return <UserMessage item={item} />;
    case 'assistant':
      return <AssistantMessage item={item} />;
    case 'thinking':
      return <Thinking item={item} />;
    case 'tool':
      return <ToolCall item={item} />;
    case 'subagent':
      return <Subagent item={item} />;
    case 'approval':
      return <ApprovalCard item={item} channel={scope.channel} />;
    case 'question':
      return <QuestionForm item={item} channel={scope.channel} />;
    case 'turn':
      return <TurnFooter item={item} channel={scope.channel} />;
    case 'note':
      return <Note item={item} hostId={scope.hostId} />;
    case 'compaction':
      return <Compaction item={item} />;
  }
}

export const ItemRow = memo(function ItemRow({ item, rev: _rev }: { item: ChatItem; rev: number }) {
  return <ItemBody item={item} />;
});

export const VisualRow = memo(function VisualRow({ visual }: { visual: ChatVisual }) {
  const scope = useContext(ThreadScopeContext)!;
  return <VisualFrame hostId={scope.hostId} chatId={scope.chatId} visual={visual} />;
});
