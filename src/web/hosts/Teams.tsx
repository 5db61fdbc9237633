// (Being written: W1.)
export function TeamsPage() {
  return <section class="page"><h1>Teams</h1></section>;
}
