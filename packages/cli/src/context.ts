/** What every command gets: the output, the environment, and a client bound to the chosen server. */
import { createClient, type Client } from './http/client.js';
import { Output } from './output.js';

export interface CommonFlags {
  json?: boolean;
  baseUrl?: string;
}

export interface Context {
  out: Output;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  client(baseUrl: string): Client;
}

export function createContext(flags: CommonFlags, env: NodeJS.ProcessEnv = process.env): Context {
  const out = new Output(Boolean(flags.json));
  return {
    out,
    env,
    stdin: process.stdin,
    client: (baseUrl) => createClient({ baseUrl, onWarnings: (warnings) => out.warnings(warnings) }),
  };
}
