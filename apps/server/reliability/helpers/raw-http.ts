/** Raw HTTP/1.1 over a socket: hostile requests a well-behaved client library would refuse to send. */
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The socket's error, if it met one (a reset shows as ECONNRESET or EPIPE). */
  error?: string;
}

export function rawRequest(port: number, head: string, body: Buffer = Buffer.alloc(0), timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('raw request timed out'));
    }, timeoutMs);
    socket.on('data', (d) => chunks.push(d));
    let error: string | undefined;
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const [headPart, ...rest] = text.split('\r\n\r\n');
      const lines = headPart.split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      let payload = rest.join('\r\n\r\n');
      if (headers['transfer-encoding'] === 'chunked') payload = dechunk(payload);
      resolve({ status, headers, body: Buffer.from(payload, 'latin1').toString('utf8'), ...(error ? { error } : {}) });
    });
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  });
}

function dechunk(s: string): string {
  let out = '';
  let rest = s;
  for (;;) {
    const i = rest.indexOf('\r\n');
    if (i < 0) return out;
    const size = parseInt(rest.slice(0, i), 16);
    if (!size) return out;
    out += rest.slice(i + 2, i + 2 + size);
    rest = rest.slice(i + 2 + size + 2);
  }
}

export function requestHead(method: string, path: string, headers: Record<string, string>, bodyLength: number): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (bodyLength > 0 || method !== 'GET') lines.push(`Content-Length: ${bodyLength}`);
  return lines.join('\r\n') + '\r\n\r\n';
}
