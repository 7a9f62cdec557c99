/**
 * A TCP proxy in front of PostgreSQL or Redis whose `outage()` cuts every connection and refuses new
 * ones until `restore()`: from the server's side the service has stopped, while the shared service
 * keeps running for everything else on this machine.
 */
import net from 'node:net';

export class TcpProxy {
  private server?: net.Server;
  private sockets = new Set<net.Socket>();
  private down = false;
  port = 0;

  constructor(private readonly targetPort: number, private readonly targetHost = '127.0.0.1') {}

  async start(): Promise<number> {
    this.server = net.createServer((client) => {
      if (this.down) {
        client.destroy();
        return;
      }
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as net.AddressInfo).port;
    return this.port;
  }

  outage(): void {
    this.down = true;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.down = false;
  }

  async close(): Promise<void> {
    this.outage();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
