/**
 * A real, certified OpenID provider for the tests: panva's `oidc-provider` on a loopback port,
 * behind its own nginx instance (a temporary configuration on a free port, as an operator would run
 * a provider behind a proxy). Its development login form accepts any login name with any password;
 * the login name picks the account (`accounts`), whose claims the tests control. Clients: a
 * confidential one (client_secret_basic) and a public one (PKCE only), both with http redirect URIs
 * on loopback, which the provider accepts for the code flow.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Provider from 'oidc-provider';

export const NGINX = '/usr/sbin/nginx';
export const CONFIDENTIAL = { id: 'reftrack-confidential', secret: 'a-client-secret-of-enough-length-0123456789' };
export const PUBLIC_CLIENT = { id: 'reftrack-public' };

export interface ProviderAccount {
  email?: string;
  email_verified?: unknown;
  name?: string;
}

export interface RunningProvider {
  /** The issuer: nginx's address. */
  issuer: string;
  /** The provider's own address, behind nginx. */
  upstream: string;
  accounts: Map<string, ProviderAccount>;
  close(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`nothing listens on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts nginx in the foreground (its own prefix, pid and temp folders) proxying `listen` to `upstream`. */
export async function startNginx(listen: number, upstreamPort: number): Promise<{ process: ChildProcess; close(): Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'reftrack-nginx-'));
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 128; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${listen};
    location / {
      proxy_pass http://127.0.0.1:${upstreamPort};
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-For $remote_addr;
    }
  }
}
`,
  );
  const child = spawn(NGINX, ['-p', dir, '-c', conf, '-e', path.join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await Promise.race([waitForPort(listen), exited.then(() => Promise.reject(new Error(`nginx exited: ${stderr}`)))]);
  return {
    process: child,
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startOidcProvider(options: { redirectUris: string[]; postLogoutRedirectUris: string[]; accounts?: Record<string, ProviderAccount> }): Promise<RunningProvider> {
  const upstreamPort = await freePort();
  const listen = await freePort();
  const issuer = `http://127.0.0.1:${listen}`;
  const accounts = new Map(Object.entries(options.accounts ?? {}));
  const client = { redirect_uris: options.redirectUris, post_logout_redirect_uris: options.postLogoutRedirectUris, grant_types: ['authorization_code'], response_types: ['code'] };
  const provider = new Provider(issuer, {
    clients: [
      { ...client, client_id: CONFIDENTIAL.id, client_secret: CONFIDENTIAL.secret, token_endpoint_auth_method: 'client_secret_basic' },
      { ...client, client_id: PUBLIC_CLIENT.id, token_endpoint_auth_method: 'none' },
    ],
    cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // Scope claims in the id_token, as Keycloak, Auth0, Google and Entra put them (docs/accounts.md).
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    async findAccount(_ctx, id) {
      return {
        accountId: id,
        async claims() {
          const a = accounts.get(id) ?? { email: `${id}@corp.test`, email_verified: true };
          return { sub: id, ...a } as { sub: string };
        },
      };
    },
  });
  provider.proxy = true;
  const server = http.createServer(provider.callback());
  await new Promise<void>((r) => server.listen(upstreamPort, '127.0.0.1', r));
  const nginx = await startNginx(listen, upstreamPort);
  return {
    issuer,
    upstream: `http://127.0.0.1:${upstreamPort}`,
    accounts,
    async close() {
      await nginx.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
