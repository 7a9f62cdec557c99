/** What the answer that carries a whole program key says beside it (dashboard and CLI alike). */
export function generatedKeyNote(replaced: boolean): string {
  return replaced
    ? 'Store this key now: it is shown only once. The previous key stopped working at this moment.'
    : 'Store this key now: it is shown only once.';
}
