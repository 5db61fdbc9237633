// A visual the agent published, drawn in a sandboxed frame from its own route.
import type { ChatVisual } from '../../../contracts/index.ts';

export function VisualFrame({ visual }: { hostId: string; chatId: string; visual: ChatVisual }) {
  return <figure class="visual-frame" aria-label={visual.title}><figcaption>{visual.title}</figcaption></figure>;
}
