// (Being written: W1.)
export function HostPage() {
  return <section class="page"><h1>Host</h1></section>;
}
