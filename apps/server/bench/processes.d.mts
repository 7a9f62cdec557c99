/** See processes.mjs (declared for the tests that start the bench's bare server). */
export declare function startBareServer(env?: Record<string, string>): Promise<{ url: string; pids: () => number[]; stop: () => Promise<void> }>;
