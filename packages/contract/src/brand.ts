/** The product's brand, wherever the spec writes `svc`, `[Service]` or `<cli>`. One edit renames it. */
export const BRAND = {
  name: 'Reftrack',
  token: 'reftrack',
  cookieName: 'reftrack_click_id',
  metadataClickId: 'reftrack_click_id',
  metadataCustomerKey: 'reftrack_customer_key',
  metadataProgramId: 'program_id',
  scriptProgramAttribute: 'data-reftrack-program-id',
  debugPrefix: '[Reftrack]',
  cli: 'reftrack',
  serverCommand: 'reftrack-server',
  programKeyPrefix: 'aff_',
  agentKeyPrefix: 'agt_',
  clickIdPrefix: 'clk_',
  /** A processor connection's intake address id: POST /api/v1/webhooks/stripe/whe_… */
  webhookEndpointPrefix: 'whe_',
  /** Path of the error reference page below PUBLIC_BASE_URL; `docs_url` = base + this. */
  docsErrorsPath: '/docs/errors',
} as const;

/** `{docs_url}` of the spec for a given public base URL, optionally with an anchor. */
export function docsUrl(publicBaseUrl: string, anchor?: string): string {
  const base = publicBaseUrl.replace(/\/+$/, '') + BRAND.docsErrorsPath;
  return anchor ? `${base}#${anchor}` : base;
}
