// The files on a person's message. The bytes stay on the host; the relay serves each one on its own
// route (/v1/attachments, behind a short-lived ticket for that one file). Images the browser decodes
// safely (png, jpeg, gif, webp) show as thumbnails that open full size; anything else is a download
// link (the relay serves it as a download, never as a page). A thumbnail's box is sized before the
// image arrives, so the thread's row does not change height when it does.
import type { ComponentChildren } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { attachmentImageMime, type ChatAttachment } from '../../../contracts/index.ts';
import { Icon } from '../../app/icons.tsx';
import { api } from '../../app/session.ts';
import { ticketStillGood, ticketedUrl } from '../ticket-urls.ts';
import { formatBytes } from './format.ts';
import { ThreadScopeContext } from './scope.ts';
import './attachments.css';

/** The largest a thumbnail is drawn (CSS pixels); an image of unknown size gets the square of the height. */
const THUMB_WIDTH = 240;
const THUMB_HEIGHT = 160;

interface Place {
  hostId: string;
  chatId: string;
}

function thumbSize(attachment: ChatAttachment): { width: number; height: number } {
  const { width, height } = attachment;
  if (!width || !height) return { width: THUMB_HEIGHT, height: THUMB_HEIGHT };
  const scale = Math.min(1, THUMB_WIDTH / width, THUMB_HEIGHT / height);
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** The attachment's address with a ticket, minted when the view mounts; `renew` asks for a new one. */
function useAttachmentUrl(place: Place, attachment: ChatAttachment) {
  const key = `attachment/${place.hostId}/${place.chatId}/${attachment.id}`;
  const mint = () => api.attachmentTicket(place.hostId, place.chatId, attachment.id);
  const [url, setUrl] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: minted once per attachment (key); mint is a new closure every draw
  useEffect(() => {
    let live = true;
    setFailed(false);
    ticketedUrl(key, mint).then(
      (next) => {
        if (live) setUrl(next);
      },
      () => {
        if (live) setFailed(true);
      },
    );
    return () => {
      live = false;
    };
  }, [key]);
  const renew = () => ticketedUrl(key, mint, true);
  return { url, failed, setUrl, setFailed, renew, good: () => ticketStillGood(key) };
}

function ImageAttachment({ place, attachment }: { place: Place; attachment: ChatAttachment }) {
  const { url, failed, setUrl, setFailed, renew, good } = useAttachmentUrl(place, attachment);
  const [retried, setRetried] = useState(false);
  const size = thumbSize(attachment);
  if (failed) return <FileAttachment place={place} attachment={attachment} note="image not available" />;
  return (
    <li class="attachment attachment-image" title={attachment.name}>
      <a
        class="attachment-thumb"
        href={url ?? undefined}
        target="_blank"
        rel="noopener noreferrer"
        aria-label={`Open ${attachment.name} full size`}
        style={{ width: `${size.width}px`, height: `${size.height}px` }}
        onClick={(event) => {
          if (!url || good()) return;
          // The address is about to expire: open a fresh one (in this tab: a popup after a wait would be blocked).
          event.preventDefault();
          void renew().then((fresh) => location.assign(fresh));
        }}
      >
        {url ? (
          <img
            src={url}
            alt={attachment.name}
            loading="lazy"
            decoding="async"
            width={size.width}
            height={size.height}
            onError={() => {
              // A ticket that ran out while the row was away: one new one; then the file is gone.
              if (retried) {
                setFailed(true);
                return;
              }
              setRetried(true);
              renew().then(setUrl, () => setFailed(true));
            }}
          />
        ) : null}
      </a>
      <span class="attachment-caption">
        <span class="attachment-name">{attachment.name}</span>
        <span class="attachment-meta">{formatBytes(attachment.size)}</span>
      </span>
    </li>
  );
}

function FileAttachment({ place, attachment, note }: { place: Place | null; attachment: ChatAttachment; note?: string }) {
  const dims = attachment.width && attachment.height ? ` · ${attachment.width}×${attachment.height}` : '';
  const meta = (
    <span class="attachment-meta">
      {formatBytes(attachment.size)}
      {dims}
      {note ? ` · ${note}` : ''}
    </span>
  );
  if (!place || note) {
    return (
      <li class="attachment" title={attachment.name}>
        <Icon name="file" size={18} />
        <span class="attachment-name">{attachment.name}</span>
        {meta}
      </li>
    );
  }
  return <DownloadLink place={place} attachment={attachment} meta={meta} />;
}

function DownloadLink({ place, attachment, meta }: { place: Place; attachment: ChatAttachment; meta: ComponentChildren }) {
  const { url, renew, good } = useAttachmentUrl(place, attachment);
  return (
    <li class="attachment" title={attachment.name}>
      <a
        class="attachment-download"
        href={url ?? undefined}
        download={attachment.name}
        aria-label={`Download ${attachment.name}`}
        onClick={(event) => {
          if (url && good()) return;
          event.preventDefault();
          // A download does not leave the page: the relay answers it as an attachment.
          void renew().then((fresh) => location.assign(fresh));
        }}
      >
        <Icon name="download" size={18} />
        <span class="attachment-name">{attachment.name}</span>
      </a>
      {meta}
    </li>
  );
}

/** The attachments of one message. */
export function Attachments({ attachments }: { attachments: readonly ChatAttachment[] }) {
  const scope = useContext(ThreadScopeContext);
  const place = scope ? { hostId: scope.hostId, chatId: scope.chatId } : null;
  return (
    <ul class="attachments" aria-label="Attachments">
      {attachments.map((attachment) =>
        place && attachmentImageMime(attachment) ? (
          <ImageAttachment key={attachment.id} place={place} attachment={attachment} />
        ) : (
          <FileAttachment key={attachment.id} place={place} attachment={attachment} />
        ),
      )}
    </ul>
  );
}
