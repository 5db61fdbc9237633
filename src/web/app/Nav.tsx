// The app's sections: a tab bar at the bottom of a phone, a rail at the left of a desktop. Icons are
// the app's inline SVG icons (icons.tsx).
import { Icon } from './icons.tsx';

const SECTIONS = [
  { id: 'chats', href: '/', label: 'Chats' },
  { id: 'hosts', href: '/hosts', label: 'Hosts' },
  { id: 'teams', href: '/teams', label: 'Teams' },
  { id: 'usage', href: '/usage', label: 'Usage' },
  { id: 'settings', href: '/settings', label: 'Settings' },
] as const;

export function Nav({ section }: { section: string }) {
  return (
    <nav class="nav" aria-label="Sections">
      <span class="brand" aria-hidden="true">
        Tether
      </span>
      {SECTIONS.map((s) => (
        <a key={s.id} href={s.href} aria-current={s.id === section ? 'page' : undefined}>
          <Icon name={s.id} size={22} class="nav-icon" />
          <span class="nav-label">{s.label}</span>
        </a>
      ))}
    </nav>
  );
}
