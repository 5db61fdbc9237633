// (Being written: W1.)
export function NewChatPage() {
  return <section class="page"><h1>New chat</h1></section>;
}
