/** Opening the sign-in page. The URL is always printed too, so a failed or absent browser never blocks anyone. */

/** False where a browser cannot appear: CI, an SSH session without a display, a Linux box without X or Wayland. */
export function browserLikely(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): boolean {
  if (env.CI) return false;
  if (platform === 'linux') return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY || env.WSL_DISTRO_NAME);
  if (env.SSH_CONNECTION && platform !== 'win32') return false;
  return true;
}

/** Returns whether a browser process was started. `open` is imported only here, when it is needed. */
export async function openBrowser(url: string): Promise<boolean> {
  try {
    const { default: open } = await import('open');
    const child = await open(url);
    // A missing opener reports asynchronously; without a listener that would crash the CLI.
    child.once('error', () => {});
    child.unref();
    return child.pid !== undefined;
  } catch {
    return false;
  }
}
