/** See postgres-url.mjs. */
export declare function findTestPostgres(): Promise<string | undefined>;
