/** See sqlite-checkpoints.mjs. */
export declare const WAL_LIMIT_BYTES: number;
export declare function startCheckpointer(db: { pragma(source: string): unknown; readonly open: boolean }, o: { filename: string; lock: SharedArrayBuffer; walLimitBytes?: number }): { close: () => void };
