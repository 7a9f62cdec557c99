export declare const repoRoot: string;
export declare const PUBLIC_PACKAGES: string[];
export declare function packPublicPackages(dest: string): Record<string, string>;
