"""Who may post to ``/api/messages``, and how the bot proves who it is when it replies.

Inbound, every activity carries a Bot Framework JWT, and botframework-connector checks it: the
signature against the keys published at ``openid_metadata_url``, the issuer, the audience (our
app id), the expiry, the key's channel endorsement, and that the token's ``serviceurl`` claim is
the activity's ``serviceUrl``, so nobody can make the bot post an answer to a server they chose.
Outbound, each reply carries a token the bot gets from Entra ID (MSAL, client credentials, at
``login_url``).

botbuilder turns every check off when the app id is empty. Footnote never does that by
accident: ``check_teams`` refuses to serve Teams without an app id and password, and the only
unauthenticated mode is ``FOOTNOTE_TEAMS__ALLOW_UNAUTHENTICATED=true`` on a loopback address,
for the Bot Framework Emulator, where replies may only go to loopback ``serviceUrl``s.
"""

from __future__ import annotations

import ipaddress
import logging
from urllib.parse import urlsplit

import msal
import requests
from botbuilder.schema import Activity, CallerIdConstants
from botframework.connector.auth import (
    AppCredentials,
    AuthenticateRequestResult,
    AuthenticationConfiguration,
    AuthenticationConstants,
    BotFrameworkAuthentication,
    BotFrameworkAuthenticationFactory,
    PasswordServiceClientCredentialFactory,
    ServiceClientCredentialsFactory,
)
from pydantic import SecretStr

from bot.settings import BOT_FRAMEWORK_OPENID_METADATA_URL, ENTRA_LOGIN_URL, TeamsSettings
from ingest.errors import ConfigError

log = logging.getLogger(__name__)

CREDENTIALS_FIX = (
    "set FOOTNOTE_TEAMS__APP_ID and FOOTNOTE_TEAMS__APP_PASSWORD (the Azure Bot's Microsoft App ID "
    "and client secret), or FOOTNOTE_TEAMS__ALLOW_UNAUTHENTICATED=true with "
    "FOOTNOTE_SERVER__HOST=127.0.0.1 for the Bot Framework Emulator only"
)


class KeysUnavailable(Exception):
    """The token-signing keys could not be fetched: our side is at fault, not the caller."""


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _posture_problem(settings: TeamsSettings) -> str | None:
    """What is wrong with the Teams settings whatever the listen address, or None."""
    app_id, password = settings.app_id.strip(), settings.app_password.get_secret_value().strip()
    if settings.allow_unauthenticated:
        if app_id or password:
            return (
                "FOOTNOTE_TEAMS__ALLOW_UNAUTHENTICATED=true turns token checks off, yet "
                "FOOTNOTE_TEAMS__APP_ID / FOOTNOTE_TEAMS__APP_PASSWORD are set too: unset "
                "ALLOW_UNAUTHENTICATED for a real Teams app, or unset the app id and password for "
                "the Bot Framework Emulator"
            )
        return None
    if not app_id or not password:
        missing = [
            name
            for name, value in (
                ("FOOTNOTE_TEAMS__APP_ID", app_id),
                ("FOOTNOTE_TEAMS__APP_PASSWORD", password),
            )
            if not value
        ]
        return (
            f"Teams is on (a FOOTNOTE_TEAMS__* variable is set) but {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} empty, and without both no activity's token "
            f"can be checked: {CREDENTIALS_FIX}"
        )
    for name, url in (
        ("FOOTNOTE_TEAMS__OPENID_METADATA_URL", settings.openid_metadata_url),
        ("FOOTNOTE_TEAMS__LOGIN_URL", settings.login_url),
    ):
        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname:
            return f"{name} must be an https URL (got {url!r}); unset it to use Microsoft's"
    return None


def check_teams(settings: TeamsSettings | None, host: str) -> None:
    """Refuse to serve Teams in a posture where anyone could post as anyone.

    ``footnote serve`` calls this before it builds anything. Raises ``ConfigError`` naming the
    variables to set; logs a WARNING when it lets the Emulator's unauthenticated mode run.
    """
    if settings is None:
        return
    problem = _posture_problem(settings)
    if problem:
        raise ConfigError(problem)
    if settings.allow_unauthenticated:
        if not is_loopback(host):
            raise ConfigError(
                "FOOTNOTE_TEAMS__ALLOW_UNAUTHENTICATED=true accepts unsigned activities, so it is "
                f"allowed only on a loopback address and FOOTNOTE_SERVER__HOST is {host!r}: set "
                "FOOTNOTE_SERVER__HOST=127.0.0.1 for the Bot Framework Emulator, or unset "
                "ALLOW_UNAUTHENTICATED and set FOOTNOTE_TEAMS__APP_ID and "
                "FOOTNOTE_TEAMS__APP_PASSWORD"
            )
        log.warning(
            "Teams runs UNAUTHENTICATED (FOOTNOTE_TEAMS__ALLOW_UNAUTHENTICATED=true): activities "
            "are not signed, anyone who can reach %s may ask as anyone, and replies go to "
            "loopback serviceUrls only. For the Bot Framework Emulator, never for Teams.",
            host,
        )


def teams_posture(settings: TeamsSettings | None) -> str:
    """One phrase for the start-up log line: how Teams activities are authenticated."""
    if settings is None:
        return "teams: off"
    if settings.allow_unauthenticated:
        return "teams: UNAUTHENTICATED (emulator, loopback only)"
    details = [f"app id {settings.app_id[:4]}…"]
    if settings.tenant_id:
        details.append(f"tenant {settings.tenant_id}")
    if settings.openid_metadata_url != BOT_FRAMEWORK_OPENID_METADATA_URL:
        details.append(f"keys from {settings.openid_metadata_url}")
    if settings.login_url != ENTRA_LOGIN_URL:
        details.append(f"tokens from {settings.login_url}")
    return f"teams: jwt ({', '.join(details)})"


def authority(settings: TeamsSettings) -> str:
    """The Entra ID authority the bot gets its reply tokens from."""
    tenant = settings.tenant_id or AuthenticationConstants.DEFAULT_CHANNEL_AUTH_TENANT
    return f"{settings.login_url.rstrip('/')}/{tenant}"


def bot_authentication(settings: TeamsSettings) -> BotFrameworkAuthentication:
    """botframework-connector's checks, wired to the settings; never silently off."""
    problem = _posture_problem(settings)
    if problem:
        raise ConfigError(problem)
    if settings.allow_unauthenticated:
        # botbuilder's anonymous mode: no app id, so no token is asked for or sent.
        return BotFrameworkAuthenticationFactory.create(
            credential_factory=PasswordServiceClientCredentialFactory()
        )
    login = authority(settings)
    return BotFrameworkAuthenticationFactory.create(
        validate_authority=True,
        to_channel_from_bot_login_url=login,
        to_channel_from_bot_oauth_scope=AuthenticationConstants.TO_CHANNEL_FROM_BOT_OAUTH_SCOPE,
        to_bot_from_channel_token_issuer=AuthenticationConstants.TO_BOT_FROM_CHANNEL_TOKEN_ISSUER,
        oauth_url=AuthenticationConstants.OAUTH_URL,
        to_bot_from_channel_open_id_metadata_url=settings.openid_metadata_url,
        to_bot_from_emulator_open_id_metadata_url=(
            AuthenticationConstants.TO_BOT_FROM_EMULATOR_OPENID_METADATA_URL
        ),
        caller_id=CallerIdConstants.public_azure_channel,
        credential_factory=EntraCredentialFactory(
            settings.app_id,
            settings.app_password,
            login,
            # MSAL's instance discovery asks login.microsoftonline.com whether a host is one of
            # Microsoft's; an operator who sets another login URL has already said it is trusted.
            instance_discovery=settings.login_url == ENTRA_LOGIN_URL,
        ),
        auth_configuration=AuthenticationConfiguration(),
    )


async def authenticate(
    auth: BotFrameworkAuthentication, activity: Activity, header: str
) -> AuthenticateRequestResult:
    """botframework-connector's check, failing closed.

    Raises ``PermissionError`` for every bad token (botframework-connector itself lets PyJWT's
    errors, unknown key ids and a forbidden ``alg`` escape as other exceptions, and takes a token
    without ``exp``), and
    ``KeysUnavailable`` when the signing keys cannot be fetched.
    """
    try:
        result = await auth.authenticate_request(activity, header)
    except PermissionError:
        raise
    except requests.RequestException as exc:
        raise KeysUnavailable(str(exc)) from exc
    except Exception as exc:
        raise PermissionError(f"invalid token ({type(exc).__name__}: {exc})") from exc
    identity = result.claims_identity
    anonymous = identity is None or (
        identity.authentication_type == AuthenticationConstants.ANONYMOUS_AUTH_TYPE
    )  # the Emulator's mode: no token at all
    if not anonymous:
        # PyJWT checks ``exp`` only when the token has one: a token without it would never expire.
        exp = (identity.claims or {}).get("exp")
        if not isinstance(exp, int | float) or isinstance(exp, bool):
            raise PermissionError("invalid token (no exp claim: it would never expire)")
    return result


class EntraAppCredentials(AppCredentials):
    """The bot's app id and secret, exchanged at ``authority`` for a token the connector accepts.

    The MSAL client is made on first use (it fetches the authority's OpenID document) and kept, so
    its token cache answers until the token nears expiry.
    """

    def __init__(
        self,
        app_id: str,
        password: SecretStr,
        authority: str,
        oauth_scope: str,
        *,
        instance_discovery: bool,
    ):
        super().__init__(app_id=app_id, oauth_scope=oauth_scope)
        self.oauth_endpoint = authority
        self._password = password
        self._instance_discovery = instance_discovery
        self._msal: msal.ConfidentialClientApplication | None = None

    def get_access_token(self, force_refresh: bool = False) -> str:
        if self._msal is None:
            self._msal = msal.ConfidentialClientApplication(
                client_id=self.microsoft_app_id,
                client_credential=self._password.get_secret_value(),
                authority=self.oauth_endpoint,
                instance_discovery=self._instance_discovery,
            )
        scope = self.oauth_scope.rstrip("/")
        if not scope.endswith("/.default"):
            scope += "/.default"
        result = self._msal.acquire_token_for_client(scopes=[scope])  # cached by MSAL
        if "access_token" in result:
            return result["access_token"]
        raise PermissionError(
            f"Entra ID at {self.oauth_endpoint} gave no token for app {self.microsoft_app_id}: "
            f"{result.get('error')}: {result.get('error_description')}; check "
            "FOOTNOTE_TEAMS__APP_ID, FOOTNOTE_TEAMS__APP_PASSWORD and FOOTNOTE_TEAMS__TENANT_ID"
        )


class EntraCredentialFactory(ServiceClientCredentialsFactory):
    """Credentials for our one app id, one per audience, kept between turns (botbuilder's own
    factory builds a new MSAL client, and so asks Entra ID for a new token, on every turn)."""

    def __init__(
        self, app_id: str, password: SecretStr, authority: str, *, instance_discovery: bool
    ):
        self.app_id, self._password, self._authority = app_id, password, authority
        self._instance_discovery = instance_discovery
        self._by_scope: dict[str, EntraAppCredentials] = {}

    async def is_valid_app_id(self, app_id: str) -> bool:
        return bool(app_id) and app_id == self.app_id

    async def is_authentication_disabled(self) -> bool:
        return False  # never: the Emulator's mode uses botbuilder's factory, without an app id

    async def create_credentials(
        self, app_id: str, oauth_scope: str, login_endpoint: str, validate_authority: bool
    ) -> EntraAppCredentials:
        if not await self.is_valid_app_id(app_id):
            raise PermissionError(f"no credentials for app id {app_id!r}")
        scope = oauth_scope or AuthenticationConstants.TO_CHANNEL_FROM_BOT_OAUTH_SCOPE
        if scope not in self._by_scope:
            self._by_scope[scope] = EntraAppCredentials(
                self.app_id,
                self._password,
                self._authority,
                scope,
                instance_discovery=self._instance_discovery,
            )
        return self._by_scope[scope]
