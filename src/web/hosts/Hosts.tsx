// (Being written: W1.)
export function HostsPage() {
  return <section class="page"><h1>Hosts</h1></section>;
}
