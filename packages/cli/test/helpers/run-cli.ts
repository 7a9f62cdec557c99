/** Runs the built binary as a subprocess, the way a person or a CI job does. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(PACKAGE_ROOT, 'dist/reftrack.js');

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Environment without the caller's REFTRACK_* settings, so a developer's own login never leaks into a test. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('REFTRACK_') && k !== 'CI') env[k] = v;
  return { ...env, ...extra };
}

export function runCli(args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { env: cleanEnv(env), timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

export function spawnCli(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Resolves with the first stderr line that is a JSON event of the given name (JSON mode). */
export function waitForEvent(child: ChildProcess, name: string, timeoutMs = 15_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`no "${name}" event on stderr within ${timeoutMs} ms; got: ${buffer}`)), timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (const line of buffer.split('\n')) {
        try {
          const event = JSON.parse(line) as Record<string, unknown>;
          if (event.event === name) {
            clearTimeout(timer);
            resolve(event);
          }
        } catch {
          // not a complete JSON line yet
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`CLI exited (${code}) before the "${name}" event; stderr: ${buffer}`));
    });
  });
}

export function collect(child: ChildProcess): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}
