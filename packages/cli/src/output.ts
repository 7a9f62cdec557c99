/**
 * Everything the CLI prints goes through here. Human mode: results on stdout, progress, warnings
 * and errors on stderr. `--json` mode: exactly one JSON document on stdout (the result or
 * `{error}`), and stderr carries only newline-delimited JSON events, so both stay parseable.
 */
import type { CliError } from './cli-error.js';
import type { Warning } from './http/client.js';

export interface Stream {
  write(chunk: string): boolean;
  isTTY?: boolean;
}

export interface Spinner {
  update(text: string): void;
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const CLEAR_LINE = '\r\x1b[K';

export interface ErrorDocument {
  error: {
    code: string;
    message: string;
    status: number | null;
    exit_code: number;
    hint: string | null;
    request_id: string | null;
    retry_after_seconds: number | null;
  };
}

export function errorDocument(err: CliError): ErrorDocument {
  return {
    error: {
      code: err.code,
      message: err.message,
      status: err.status,
      exit_code: err.exitCode,
      hint: err.hint,
      request_id: err.requestId,
      retry_after_seconds: err.retryAfterSeconds,
    },
  };
}

/** Human rendering of an error: the code first (what scripts and docs key on), then the message, then what to do. */
export function renderError(err: CliError): string {
  const where = err.status !== null ? ` (HTTP ${err.status})` : '';
  const lines = [`Error: ${err.code}${where}: ${err.message}`];
  if (err.hint) lines.push(`Hint: ${err.hint}`);
  if (err.requestId && !err.message.includes(err.requestId)) lines.push(`Request id: ${err.requestId}`);
  return lines.join('\n') + '\n';
}

export function renderWarning(w: Warning): string {
  const lines = [`Warning: ${w.code}: ${w.message}`];
  if (w.hint) lines.push(`  ${w.hint}`);
  if (w.docs_url) lines.push(`  ${w.docs_url}`);
  return lines.join('\n') + '\n';
}

export class Output {
  private spinnerActive = false;
  private readonly seenWarnings = new Set<string>();

  constructor(
    readonly json: boolean,
    private readonly stdout: Stream = process.stdout,
    private readonly stderr: Stream = process.stderr,
  ) {}

  /** The command's one result: a JSON document, or the human text. */
  result(doc: unknown, human: () => string): void {
    if (this.json) this.stdout.write(JSON.stringify(doc, null, 2) + '\n');
    else this.stdout.write(human());
  }

  /** Progress for people; silent in JSON mode (use `event` there). */
  info(text: string): void {
    if (this.json) return;
    this.clearSpinnerLine();
    this.stderr.write(text.endsWith('\n') ? text : text + '\n');
  }

  /** A machine-readable progress line on stderr in JSON mode; nothing in human mode. */
  event(name: string, fields: Record<string, unknown>): void {
    if (!this.json) return;
    this.stderr.write(JSON.stringify({ event: name, ...fields }) + '\n');
  }

  warnings(list: Warning[]): void {
    for (const w of list) {
      // A marked key warns on every response; once per run is enough for a person.
      if (this.seenWarnings.has(w.message)) continue;
      this.seenWarnings.add(w.message);
      if (this.json) this.event('warning', { ...w });
      else {
        this.clearSpinnerLine();
        this.stderr.write(renderWarning(w));
      }
    }
  }

  error(err: CliError): void {
    this.clearSpinnerLine();
    if (!this.json) this.stderr.write(renderError(err));
    else if (err.resultPrinted) this.event('error', errorDocument(err).error);
    else this.stdout.write(JSON.stringify(errorDocument(err), null, 2) + '\n');
  }

  /** Animated only for a person watching a terminal; a pipe or a CI log gets nothing. */
  spinner(text: string): Spinner {
    if (this.json || !this.stderr.isTTY) return { update() {}, stop() {} };
    let frame = 0;
    let current = text;
    this.spinnerActive = true;
    const draw = () => {
      if (!this.spinnerActive) return;
      this.stderr.write(`${CLEAR_LINE}${FRAMES[frame++ % FRAMES.length]} ${current}`);
    };
    draw();
    const timer = setInterval(draw, 80);
    // The spinner must never be what keeps the process alive.
    timer.unref();
    return {
      update: (next) => {
        current = next;
        draw();
      },
      stop: () => {
        clearInterval(timer);
        this.clearSpinnerLine();
        this.spinnerActive = false;
      },
    };
  }

  private clearSpinnerLine(): void {
    if (this.spinnerActive) this.stderr.write(CLEAR_LINE);
  }
}
