// What a route shows when nothing is there.
export function Missing() {
  return (
    <section class="page">
      <h1>Not found</h1>
      <p>
        Nothing is here. <a href="/">Go to your chats</a>.
      </p>
    </section>
  );
}
