/**
 * A QR code of a link, drawn as inline SVG from the `qrcode` library's module matrix (no CDN, no
 * image request), with a download of the same SVG so a partner can print it. The library is loaded
 * the first time a QR code is shown (its own chunk, from this server), so the first page stays light.
 */
import { useEffect, useState } from 'preact/hooks';

const QUIET = 4; // the quiet zone the QR standard asks for, in modules

export async function qrSvg(text: string): Promise<{ size: number; path: string }> {
  const { default: QRCode } = await import('qrcode');
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  let path = '';
  for (let row = 0; row < modules.size; row++) {
    for (let col = 0; col < modules.size; col++) if (modules.get(row, col)) path += `M${col + QUIET} ${row + QUIET}h1v1h-1z`;
  }
  return { size: modules.size + 2 * QUIET, path };
}

export function QrCode({ text, label, fileName }: { text: string; label: string; fileName: string }) {
  const [qr, setQr] = useState<{ size: number; path: string } | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    qrSvg(text).then(setQr, () => setFailed(true));
  }, [text]);
  if (!qr) return <p class="muted">{failed ? 'The QR code could not be drawn; reload the page.' : 'Drawing the QR code…'}</p>;
  const { size, path } = qr;
  const file = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" shape-rendering="crispEdges"><rect width="100%" height="100%" fill="#fff"/><path d="${path}" fill="#000"/></svg>`;
  return (
    <figure class="qr">
      <svg viewBox={`0 0 ${size} ${size}`} role="img" aria-label={label} shape-rendering="crispEdges">
        <rect width="100%" height="100%" fill="#fff" />
        <path d={path} fill="#000" />
      </svg>
      <figcaption>
        <a href={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(file)}`} download={fileName}>
          Download the QR code (SVG)
        </a>
      </figcaption>
    </figure>
  );
}
