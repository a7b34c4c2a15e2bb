"""An app-only Microsoft Graph client: the token, and GETs that obey throttling.

Shared by the SharePoint connector (``ingest/sources/sharepoint.py``) and the bot's Graph
directory (``bot/identity/graph_directory.py``): one app registration serves both, and both sign in the
same way. Plain httpx, nothing heavy, so the bot can import it.

* **Sign-in**: the client-credentials grant against ``{authority}/{tenant}/oauth2/v2.0/token``;
  the token is kept until a minute before it expires, and fetched again once when Graph answers
  ``401 InvalidAuthenticationToken``.
* **Throttling**: ``429`` / ``503`` are retried after ``Retry-After`` (capped at ``max_wait_s``),
  at most ``retries`` times; a dropped connection likewise, with exponential backoff.
* **Errors**: credentials Entra ID or Graph refuse raise ``GraphAuthError`` naming the variables
  to set; ``403`` raises ``ConfigError`` naming the permissions (``needs``); anything else that
  keeps failing raises ``SourceUnavailable``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, NoReturn
from urllib.parse import quote, urlsplit

import httpx
from pydantic import SecretStr

from ingest.errors import ConfigError
from ingest.retry_after import retry_after
from ingest.sources.connector import SourceUnavailable

TENANT_VAR = "FOOTNOTE_GRAPH__TENANT_ID"
CLIENT_VAR = "FOOTNOTE_GRAPH__CLIENT_ID"
SECRET_VAR = "FOOTNOTE_GRAPH__CLIENT_SECRET"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class GraphAuthError(ConfigError):
    """Entra ID or Graph refused the app's credentials: the fix is in the environment."""


@dataclass
class GraphClient:
    tenant_id: str
    client_id: str
    client_secret: SecretStr
    authority: str = "https://login.microsoftonline.com"
    graph_url: str = "https://graph.microsoft.com/v1.0"
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30.0))
    retries: int = 4  # tries after the first, per request, on 429 / 503 / a dropped connection
    max_wait_s: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic  # for the token's lifetime
    requests: int = 0
    _token: str = ""
    _token_until: float = 0.0
    _lock: threading.RLock = field(default_factory=threading.RLock)

    # What a 403 means the app registration lacks; each user of the client says its own.
    needs: ClassVar[str] = "the app registration lacks a Microsoft Graph permission"

    @property
    def base(self) -> str:
        """Graph's base URL, ``…/v1.0``, without a trailing slash."""
        return self.graph_url.rstrip("/")

    def same_host(self, url: str) -> str:
        """Links Graph hands back (next, delta, resync) get the bearer token: only its own."""
        a, b = urlsplit(url), urlsplit(self.base)
        if (a.scheme, a.netloc.lower()) != (b.scheme, b.netloc.lower()):
            raise SourceUnavailable(f"Graph handed back a link to another host: {a.netloc}")
        return url

    def send(
        self, url: str, what: str, extra: Mapping[str, str], follow: bool = False
    ) -> httpx.Response:
        """One GET with the app's token, retried on 429 / 503 after Retry-After (bounded) and on
        a dropped connection; a token Graph calls invalid is replaced once."""
        attempt, refreshed = 0, False
        while True:
            headers = {"Authorization": f"Bearer {self.token()}", "Accept": "application/json"}
            self._count()
            try:
                response = self.client.get(
                    url, headers={**headers, **extra}, follow_redirects=follow
                )
            except httpx.TransportError as exc:
                if attempt >= self.retries:
                    raise SourceUnavailable(f"cannot reach Graph for {what}: {exc}") from exc
                self.sleep(min(2.0**attempt, self.max_wait_s))
                attempt += 1
                continue
            if (
                response.status_code == 401
                and not refreshed
                and error_code(response) == "InvalidAuthenticationToken"
            ):
                self._token, refreshed = "", True  # expired or revoked early: one new token
                continue
            if response.status_code in (429, 503) and attempt < self.retries:
                self.sleep(
                    retry_after(response.headers.get("retry-after"), attempt, self.max_wait_s)
                )
                attempt += 1
                continue
            return response

    def fail(self, response: httpx.Response, what: str) -> NoReturn:
        """Raise for an answer that is not what ``what`` needed, naming the fix where there is one."""
        status = response.status_code
        if status == 401:
            raise GraphAuthError(
                f"Graph refused the app's token for {what} ({error_text(response)}): check "
                f"{TENANT_VAR}, {CLIENT_VAR} and {SECRET_VAR}"
            )
        if status == 403:
            raise ConfigError(f"Graph refused {what} ({error_text(response)}): {self.needs}")
        tries = f" after {self.retries + 1} tries" if status in (429, 503) else ""
        raise SourceUnavailable(
            f"Graph answered {what} with HTTP {status}{tries}: {error_text(response)}"
        )

    def _count(self) -> None:
        with self._lock:
            self.requests += 1

    def token(self) -> str:
        """The app-only access token: the one held until a minute before it expires, else a new one."""
        with self._lock:  # one token request, however many files are being fetched
            if self._token and self.clock() < self._token_until:
                return self._token
            return self._new_token()

    def _new_token(self) -> str:
        url = f"{self.authority.rstrip('/')}/{quote(self.tenant_id)}/oauth2/v2.0/token"
        graph = urlsplit(self.base)
        form = {
            "client_id": self.client_id,
            "client_secret": self.client_secret.get_secret_value(),
            "grant_type": "client_credentials",
            "scope": f"{graph.scheme}://{graph.netloc}/.default",
        }
        response: httpx.Response | None = None
        for attempt in range(self.retries + 1):
            self._count()
            try:
                response = self.client.post(url, data=form, headers={"Accept": "application/json"})
            except httpx.TransportError as exc:
                if attempt == self.retries:
                    raise SourceUnavailable(
                        f"cannot reach {self.authority} for a token: {exc}"
                    ) from exc
                self.sleep(min(2.0**attempt, self.max_wait_s))
                continue
            if response.status_code not in (429, 503) or attempt == self.retries:
                break
            self.sleep(retry_after(response.headers.get("retry-after"), attempt, self.max_wait_s))
        assert response is not None
        body: dict[str, Any] = {}
        try:
            parsed = response.json()
            body = parsed if isinstance(parsed, dict) else {}
        except ValueError:
            pass
        if response.status_code == 200 and body.get("access_token"):
            self._token = str(body["access_token"])
            lifetime = float(body.get("expires_in") or 0)
            self._token_until = self.clock() + max(0.0, lifetime - 60)  # a minute's margin
            return self._token
        if response.status_code in (400, 401):
            said = str(body.get("error_description") or "").split("\r\n")[0].split("\n")[0][:200]
            raise GraphAuthError(
                "Entra ID refused the app's credentials "
                f"({body.get('error') or response.status_code}: {said}): check {TENANT_VAR}, "
                f"{CLIENT_VAR} and {SECRET_VAR} (client secrets expire: make a new one under the "
                "app's Certificates & secrets)"
            )
        raise SourceUnavailable(
            f"{self.authority} answered a token request with HTTP {response.status_code}"
        )


def check_urls(authority: str, url: str) -> None:
    """The client secret and tokens travel to these: https only, plain http on loopback alone."""
    for name, value in (("AUTHORITY", authority), ("URL", url)):
        parts = urlsplit(value)
        if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in LOOPBACK):
            raise ConfigError(
                f"FOOTNOTE_GRAPH__{name} must be an https:// address (the client secret and "
                f"tokens travel to it), got {value!r}"
            )


def error_code(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("code") or "") if isinstance(error, dict) else ""


def error_text(response: httpx.Response) -> str:
    """Graph's ``{"error": {"code", "message"}}``, short; the reason phrase otherwise."""
    try:
        body = response.json()
    except ValueError:
        return response.reason_phrase
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return response.reason_phrase
    return f"{error.get('code') or ''}: {str(error.get('message') or '')[:200]}".strip(": ")
