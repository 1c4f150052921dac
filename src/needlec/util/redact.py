"""Keep secrets out of every message: credentials in URLs and the values of secret-looking variables.

Error texts may echo a URL with `user:password@`, a `?token=` query or a header a server sent back;
none of it may reach a terminal, a log or an output file.
"""

from __future__ import annotations

import os
import re

MASK = "***"
_SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|AUTH)", re.IGNORECASE)
# the scheme is bounded (RFC 3986 schemes are short) so a long run of letters is scanned in linear time
_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]{0,31}://)[^/@\s]+@", re.IGNORECASE)
_QUERY = re.compile(r"(?P<key>[?&](?:[a-z_]*token|key|sig|signature|secret|password|auth)=)[^&\s#]+", re.IGNORECASE)
_BEARER = re.compile(r"(?P<key>\b(?:Bearer|token)\s+)[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
_MIN_SECRET = 6  # shorter values ("1", "yes") would mask ordinary words


def secret_values(environ: dict[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look like credentials, longest first."""
    env = os.environ if environ is None else environ
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET}
    return sorted(values, key=len, reverse=True)


def redact(text: str, environ: dict[str, str] | None = None) -> str:
    """`text` with known secret values, URL credentials, secret query values and bearer tokens masked."""
    for value in secret_values(environ):
        text = text.replace(value, MASK)
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    text = _QUERY.sub(lambda m: f"{m['key']}{MASK}", text)
    return _BEARER.sub(lambda m: f"{m['key']}{MASK}", text)
