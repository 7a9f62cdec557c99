/** See write-checks.mjs. */
export declare const STORED_MISMATCH_EXIT: number;
export declare function compareStored(o: { noun: string; acked: number; slack: number; grew: Array<[string, number]> }): { ok: boolean; text: string };
export declare function storedMismatchBanner(rows: Array<{ db: string; route: string; verify: { ok: boolean; text: string } | null }>): string;
export declare function exitCode(rows: Array<{ valid: boolean; verify: { ok: boolean } | null }>): number;
