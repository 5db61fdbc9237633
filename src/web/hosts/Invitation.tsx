// (Being written: W1.)
export function InvitationPage() {
  return <section class="page"><h1>Invitation</h1></section>;
}
