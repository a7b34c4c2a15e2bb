"""Logging for the bot process: one format, and no secret ever written to a log.

Every configured secret (each ``SecretStr`` in the settings, and a password inside a service URL)
is replaced by ``***`` in every log record as it is created — in the message, its arguments and
the formatted traceback — so a token that turns up in an exception from an SDK never reaches a
log file, whichever handler writes it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from urllib.parse import urlsplit

from pydantic import BaseModel, SecretStr

from bot.settings import Settings

MASK = "***"
MIN_SECRET_CHARS = 6  # shorter values would mask ordinary words


def secret_values(settings: BaseModel) -> list[str]:
    """Every secret the settings hold: SecretStr values, and passwords inside URLs."""
    found: list[str] = []

    def visit(value: object) -> None:
        if isinstance(value, SecretStr):
            found.append(value.get_secret_value())
        elif isinstance(value, BaseModel):
            for name in type(value).model_fields:
                visit(getattr(value, name))
        elif isinstance(value, str) and "://" in value:
            try:
                password = urlsplit(value).password
            except ValueError:
                password = None
            if password:
                found.append(password)
        elif isinstance(value, list | tuple):
            for item in value:
                visit(item)

    visit(settings)
    return sorted({s for s in found if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def install_redaction(secrets: Iterable[str]) -> None:
    """Wrap the log record factory so every record is created with the secrets masked. Secrets
    add up: a second call (another ``serve`` in the same process) masks both sets."""
    current = logging.getLogRecordFactory()
    previous = getattr(current, "wrapped", current)
    secrets = sorted(
        {s for s in secrets if len(s) >= MIN_SECRET_CHARS} | set(getattr(current, "secrets", ())),
        key=len,
        reverse=True,
    )
    if not secrets:
        return

    def factory(*args, **kwargs) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what the record has, masked
            message = str(record.msg)
        record.msg, record.args = redact(message, secrets), ()
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info), secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, secrets)
        return record

    factory.wrapped, factory.secrets = previous, tuple(secrets)  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


def configure_logging(settings: Settings, level: int = logging.INFO) -> None:
    """The bot's logging: one line per record, secrets masked."""
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    install_redaction(secret_values(settings))
