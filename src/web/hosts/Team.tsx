// (Being written: W1.)
export function TeamPage() {
  return <section class="page"><h1>Team</h1></section>;
}
