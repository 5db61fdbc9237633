// (Being written: W1.)
export function ChatListPage() {
  return <section class="page"><h1>Chats</h1></section>;
}
