// (Being written: W1.)
export function PairPage() {
  return <section class="page"><h1>Approve a host</h1></section>;
}
