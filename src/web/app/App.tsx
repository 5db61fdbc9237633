// The shell: which page is showing. (Skeleton; the web-shell engineer replaces it.)
export function App() {
  return (
    <main>
      <h1>Tether</h1>
    </main>
  );
}
