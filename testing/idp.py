"""A loopback stand-in for Microsoft's two identity services, speaking their wire formats.

* Bot Framework's token service (login.botframework.com): the OpenID configuration document and
  the JWKS with the key that signs every activity sent to the bot (``mint`` makes those tokens).
* Entra ID (login.microsoftonline.com): a tenant's OpenID configuration and the OAuth2 v2.0 token
  endpoint the bot asks, with its app id and secret (client credentials), for the token it
  sends with its replies (``accepts`` checks those, as the Bot Framework connector would).

It serves HTTPS (MSAL accepts only https authorities) from its own thread: botframework-connector
and MSAL fetch with blocking ``requests`` calls from the bot's event loop. Its certificate is
signed by a throwaway CA that ``trusted()`` puts in ``REQUESTS_CA_BUNDLE``.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import datetime as dt
import functools
import ipaddress
import os
import shutil
import ssl
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from testing.recorder import send_json

BOT_FRAMEWORK_ISSUER = "https://api.botframework.com"  # iss of tokens sent to bots
CONNECTOR_SCOPE = "https://api.botframework.com/.default"  # what a bot asks for to reply
KEY_ID = "footnote-test-key"
ENDORSEMENTS = ["msteams", "emulator", "webchat"]


@functools.cache
def rsa_key(name: str) -> rsa.RSAPrivateKey:
    """An RSA key per name, made once per test session (key generation is the slow part)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _b64(n: int) -> str:
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def jwk(key: rsa.RSAPrivateKey, kid: str, endorsements: list[str]) -> dict:
    """The key as Bot Framework publishes it: an RSA JWK with its channel endorsements."""
    numbers = key.public_key().public_numbers()
    return {
        "kty": "RSA",
        "use": "sig",
        "kid": kid,
        "x5t": kid,
        "n": _b64(numbers.n),
        "e": _b64(numbers.e),
        "endorsements": endorsements,
    }


@functools.cache
def _tls_files() -> tuple[str, str, str]:
    """(CA cert, server cert, server key) PEM files for 127.0.0.1, made once per session."""
    folder = Path(tempfile.mkdtemp(prefix="footnote-idp-"))
    atexit.register(shutil.rmtree, folder, True)
    now = dt.datetime.now(dt.UTC)
    ca_key, server_key = rsa_key("tls-ca"), rsa_key("tls-server")
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Footnote test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .add_extension(x509.ExtendedKeyUsage([x509.ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "server.pem").write_bytes(server.public_bytes(pem))
    (folder / "server.key").write_bytes(
        server_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return str(folder / "ca.pem"), str(folder / "server.pem"), str(folder / "server.key")


class LoopbackIdP:
    """Bot Framework's token service and an Entra ID tenant on https://127.0.0.1:<port>.

    ``apps`` maps the app ids it knows to their client secrets. ``token_requests`` records every
    client-credentials request (form fields, secret removed); ``metadata_requests`` counts fetches
    of the OpenID document and keys.
    """

    def __init__(self, apps: dict[str, str], *, endorsements: list[str] | None = None):
        self.apps = apps
        self.key = rsa_key("bot-framework")  # signs the tokens sent to bots
        self.entra_key = rsa_key("entra")  # signs the tokens bots get for their replies
        self.endorsements = endorsements if endorsements is not None else ENDORSEMENTS
        self.token_requests: list[dict] = []
        self.metadata_requests = 0
        self._server: ThreadingHTTPServer | None = None
        self.url = ""

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> LoopbackIdP:
        ca, cert, key = _tls_files()
        self.ca_file = ca
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        idp = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                idp._get(self)

            def do_POST(self) -> None:
                idp._post(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        self.url = f"https://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @contextlib.contextmanager
    def trusted(self) -> Iterator[None]:
        """Let ``requests`` (botframework-connector, MSAL) trust this server's certificate."""
        before = os.environ.get("REQUESTS_CA_BUNDLE")
        os.environ["REQUESTS_CA_BUNDLE"] = self.ca_file
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("REQUESTS_CA_BUNDLE", None)
            else:
                os.environ["REQUESTS_CA_BUNDLE"] = before

    # -- what the bot is configured with -------------------------------------------------------

    @property
    def openid_metadata_url(self) -> str:
        """FOOTNOTE_TEAMS__OPENID_METADATA_URL (Microsoft's is login.botframework.com's)."""
        return self.url + "/v1/.well-known/openidconfiguration"

    @property
    def login_url(self) -> str:
        """FOOTNOTE_TEAMS__LOGIN_URL (Microsoft's is https://login.microsoftonline.com)."""
        return self.url

    # -- tokens --------------------------------------------------------------------------------

    def mint(
        self,
        *,
        service_url: str | None,
        app_id: str | None = None,
        claims: dict | None = None,
        drop: tuple[str, ...] = (),
        key: rsa.RSAPrivateKey | None = None,
        headers: dict | None = None,
        algorithm: str = "RS256",
    ) -> str:
        """A token as Bot Framework signs it for an activity sent to ``app_id`` (the first app).

        ``claims`` overrides or adds claims, ``drop`` removes some, ``key`` signs with another key.
        """
        now = int(time.time())
        body = {
            "serviceurl": service_url,
            "nbf": now - 5,
            "exp": now + 3600,
            "iss": BOT_FRAMEWORK_ISSUER,
            "aud": app_id or next(iter(self.apps)),
            **(claims or {}),
        }
        for name in drop:
            body.pop(name, None)
        return jwt.encode(
            body,
            key or self.key,
            algorithm=algorithm,
            headers={"kid": KEY_ID, "x5t": KEY_ID, **(headers or {})},
        )

    def accepts(self, authorization: str | None) -> bool:
        """Whether a reply's ``Authorization`` header holds a token this IdP issued for the connector."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme != "Bearer" or not token:
            return False
        try:
            claims = jwt.decode(
                token,
                self.entra_key.public_key(),
                algorithms=["RS256"],
                audience=CONNECTOR_SCOPE.removesuffix("/.default"),
            )
        except jwt.PyJWTError:
            return False
        return claims.get("appid") in self.apps

    # -- HTTP ----------------------------------------------------------------------------------

    @staticmethod
    def _json(handler: BaseHTTPRequestHandler, status: int, payload: dict) -> None:
        send_json(handler, status, payload, "application/json; charset=utf-8")

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        path = urlsplit(handler.path).path
        if path == "/v1/.well-known/openidconfiguration":
            self.metadata_requests += 1
            return self._json(
                handler,
                200,
                {
                    "issuer": BOT_FRAMEWORK_ISSUER,
                    "authorization_endpoint": "https://invalid.botframework.com",
                    "jwks_uri": self.url + "/v1/.well-known/keys",
                    "id_token_signing_alg_values_supported": ["RS256"],
                    "token_endpoint_auth_methods_supported": ["private_key_jwt"],
                },
            )
        if path == "/v1/.well-known/keys":
            self.metadata_requests += 1
            return self._json(handler, 200, {"keys": [jwk(self.key, KEY_ID, self.endorsements)]})
        parts = path.strip("/").split("/")
        if len(parts) == 4 and parts[1:] == ["v2.0", ".well-known", "openid-configuration"]:
            tenant = parts[0]
            base = f"{self.url}/{tenant}"
            return self._json(
                handler,
                200,
                {
                    "token_endpoint": f"{base}/oauth2/v2.0/token",
                    "token_endpoint_auth_methods_supported": [
                        "client_secret_post",
                        "private_key_jwt",
                        "client_secret_basic",
                    ],
                    "jwks_uri": f"{base}/discovery/v2.0/keys",
                    "response_types_supported": ["code", "id_token", "code id_token", "token"],
                    "subject_types_supported": ["pairwise"],
                    "id_token_signing_alg_values_supported": ["RS256"],
                    "issuer": f"{base}/v2.0",
                    "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                    "device_authorization_endpoint": f"{base}/oauth2/v2.0/devicecode",
                    "end_session_endpoint": f"{base}/oauth2/v2.0/logout",
                    "tenant_region_scope": "EU",
                },
            )
        self._json(handler, 404, {"error": "not_found"})

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path).path.strip("/").split("/")
        if parts[1:] != ["oauth2", "v2.0", "token"]:
            return self._json(handler, 404, {"error": "not_found"})
        length = int(handler.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(handler.rfile.read(length).decode()).items()}
        secret = form.pop("client_secret", None)
        self.token_requests.append({"tenant": parts[0], **form})
        client = form.get("client_id", "")
        if form.get("grant_type") != "client_credentials":
            return self._error(handler, 400, "unsupported_grant_type", "AADSTS70003")
        if client not in self.apps or secret != self.apps[client]:
            return self._error(handler, 401, "invalid_client", "AADSTS7000215: Invalid secret")
        if form.get("scope") != CONNECTOR_SCOPE:
            return self._error(handler, 400, "invalid_scope", "AADSTS70011: Invalid scope")
        now = int(time.time())
        token = jwt.encode(
            {
                "aud": CONNECTOR_SCOPE.removesuffix("/.default"),
                "iss": f"https://sts.windows.net/{parts[0]}/",
                "appid": client,
                "iat": now,
                "nbf": now,
                "exp": now + 3600,
                "ver": "1.0",
            },
            self.entra_key,
            algorithm="RS256",
            headers={"kid": "entra-test-key"},
        )
        self._json(
            handler,
            200,
            {
                "token_type": "Bearer",
                "expires_in": 3599,
                "ext_expires_in": 3599,
                "access_token": token,
            },
        )

    def _error(self, handler: BaseHTTPRequestHandler, status: int, code: str, text: str) -> None:
        self._json(
            handler,
            status,
            {
                "error": code,
                "error_description": f"{text}. Trace ID: {uuid.uuid4()}",
                "error_codes": [int(text[5:12]) if text[5:12].isdigit() else 0],
                "timestamp": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ"),
            },
        )
