"""The environment a child process gets: what a program needs to run (PATH, HOME, locale,
time zone, temporary directory, proxies, certificates, Node.js and npm's own settings),
never the rest. Provider keys and other secrets in the parent's environment stay there;
a tool that needs one names it in its own `env:` (`API_KEY: ${API_KEY}`).

    child = child_environment(os.environ, {"DEMO_TOKEN": token})
"""

from __future__ import annotations

from collections.abc import Mapping

# Read by the C library, shells, Python, Node.js, npm/npx and TLS stacks to run at all.
PASSED: frozenset[str] = frozenset(
    {
        # where programs and the user's files are
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        # locale and time
        "LANG",
        "LANGUAGE",
        "TZ",
        # temporary and per-user directories
        "TMPDIR",
        "TEMP",
        "TMP",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_RUNTIME_DIR",
        # proxies (both spellings are in use)
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        # certificate authorities
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
        # Node.js and npm/npx: where modules, the cache and the registry are
        "NODE_PATH",
        "NODE_OPTIONS",
        "NVM_DIR",
        "NVM_BIN",
        "npm_config_cache",
        "npm_config_prefix",
        "npm_config_registry",
        "npm_config_userconfig",
        "NPM_CONFIG_CACHE",
        "NPM_CONFIG_PREFIX",
        "NPM_CONFIG_REGISTRY",
        "NPM_CONFIG_USERCONFIG",
        # Windows: what programs there need to start
        "SYSTEMROOT",
        "SYSTEMDRIVE",
        "WINDIR",
        "COMSPEC",
        "PATHEXT",
        "APPDATA",
        "LOCALAPPDATA",
        "USERPROFILE",
        "PROGRAMFILES",
        "PROGRAMDATA",
    }
)
PASSED_PREFIXES = ("LC_",)  # LC_ALL, LC_CTYPE, ...


def passed(name: str) -> bool:
    """Whether a child gets the parent's variable `name`."""
    return name in PASSED or name.startswith(PASSED_PREFIXES)


def child_environment(
    parent: Mapping[str, str], own: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allow-listed variables of `parent`, then the child's `own` (which win)."""
    child = {name: value for name, value in parent.items() if passed(name)}
    child.update(own or {})
    return child
