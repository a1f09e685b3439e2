/**
 * The environment a package installer runs in: built from nothing, never the worker's own. Only the
 * operator's registry, proxy and certificate settings pass through, by name; the server's secrets
 * (master key, worker token, provider API keys) and everything else stay behind. Install scripts
 * are forced off whatever the operator's environment says.
 */

/** Passed through as they are: proxies, CA bundles, the locale. */
const SHARED = new Set([
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "LANG",
  "LC_ALL",
]);

/** npm settings (`npm_config_<key>`, any case, `-` or `_`) that say where and how to fetch. */
const NPM_KEYS = new Set([
  "registry",
  "cafile",
  "strict_ssl",
  "proxy",
  "https_proxy",
  "noproxy",
  "offline",
  "prefer_offline",
  "prefer_online",
  "fetch_retries",
  "fetch_retry_factor",
  "fetch_retry_mintimeout",
  "fetch_retry_maxtimeout",
  "fetch_timeout",
  "maxsockets",
]);
/** A scope's registry: `npm_config_@myorg:registry`. */
const NPM_SCOPED_REGISTRY = /^@[a-z0-9][a-z0-9._~-]*:registry$/;

/** pip settings that say where and how to fetch. */
const PIP_KEYS = new Set([
  "PIP_INDEX_URL",
  "PIP_EXTRA_INDEX_URL",
  "PIP_NO_INDEX",
  "PIP_FIND_LINKS",
  "PIP_TRUSTED_HOST",
  "PIP_CERT",
  "PIP_CLIENT_CERT",
  "PIP_PROXY",
  "PIP_TIMEOUT",
  "PIP_DEFAULT_TIMEOUT",
  "PIP_RETRIES",
]);

const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

function passesThrough(name: string): boolean {
  if (SHARED.has(name) || PIP_KEYS.has(name)) return true;
  const npm = /^npm_config_(.+)$/i.exec(name)?.[1]?.toLowerCase().replaceAll("-", "_");
  return npm !== undefined && (NPM_KEYS.has(npm) || NPM_SCOPED_REGISTRY.test(npm));
}

/**
 * `source` is the worker's environment; `home` and `tmp` are scratch directories the installer
 * owns (its npm cache, pip's build dirs and any dotfile it writes land there, never in the worker's home).
 */
export function installerEnv(source: NodeJS.ProcessEnv, home: string, tmp: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && passesThrough(name)) env[name] = value;
  }
  return {
    ...env,
    PATH: source.PATH ?? DEFAULT_PATH,
    HOME: home,
    TMPDIR: tmp,
    LANG: source.LANG ?? "C.UTF-8",
    // Scripts off for npm however it is invoked (the flag is passed too); pip takes wheels only.
    npm_config_ignore_scripts: "true",
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
    PIP_DISABLE_PIP_VERSION_CHECK: "1",
    PYTHONNOUSERSITE: "1",
  };
}
