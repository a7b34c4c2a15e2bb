"""Who to talk to: ``LLMSettings`` → a (cheap, strong) pair of LlamaIndex LLM clients.

``agent.llm_reasoner`` decides how to talk to them; this module only knows providers: how to
build their clients, what their SDKs raise (``provider_errors``), and whether they answer at all
(``check_reachable``, run once at start-up). Each provider package is imported inside its branch,
so a deployment installs only the one it uses. Temperature is 0 everywhere: routing and grading
must be repeatable. Retries are few (``FOOTNOTE_LLM__MAX_RETRIES``): a step that keeps failing is
better made offline at once than after a minute of back-off.

Cohere goes through its OpenAI-compatible Compatibility API (tools and structured outputs
included) rather than ``llama-index-llms-cohere``, which pins ``cohere<6`` and would downgrade
the ``cohere`` SDK the rest of the stack uses.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from agent.settings import LLMSettings
from ingest.errors import ConfigError

if TYPE_CHECKING:
    from llama_index.core.llms import LLM
    from llama_index.llms.openai_like import OpenAILike

KEY_VAR = "FOOTNOTE_LLM__API_KEY"
BASE_URL_VAR = "FOOTNOTE_LLM__BASE_URL"
MODEL_VARS = "FOOTNOTE_LLM__MODEL / FOOTNOTE_LLM__CHEAP_MODEL"
PROBE = "Reply with the single word OK."
PROBE_TOKENS = 16
COHERE_COMPAT_URL = "https://api.cohere.ai/compatibility/v1"
# LLMSettings has no api_version yet; this GA version supports tools and json_schema outputs.
AZURE_API_VERSION = "2024-10-21"


def build_llms(settings: LLMSettings) -> tuple[LLM, LLM]:
    """``(cheap, strong)``: cheap routes, plans, grades and checks; strong answers and rewrites."""
    strong = _build(settings, settings.model)
    cheap = _build(settings, settings.cheap_model) if settings.cheap_model else strong
    return cheap, strong


def _build(s: LLMSettings, model: str) -> LLM:
    llm: LLM
    if s.provider == "openai":
        from llama_index.llms.openai import OpenAI

        llm = OpenAI(
            model=model,
            api_key=_key(s),
            api_base=s.base_url,
            max_tokens=s.max_reply_tokens,
            temperature=0.0,
            timeout=s.timeout_s,
            max_retries=s.max_retries,
        )
    elif s.provider == "openai_like":
        from llama_index.llms.openai_like import OpenAILike

        cls = _schema_in_json_object() if s.structured_output == "json_object" else OpenAILike
        llm = cls(
            model=model,
            api_base=_base_url(s, "the OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1"),
            # Local servers (vLLM, Ollama, llama.cpp) often take no key; the SDK still wants one.
            api_key=s.api_key.get_secret_value() if s.api_key else "unused",
            is_chat_model=True,
            is_function_calling_model=True,
            # LlamaIndex's structured calls send the schema as response_format instead of a
            # forced tool call (FOOTNOTE_LLM__STRUCTURED_OUTPUT).
            should_use_structured_outputs=s.structured_output != "tool_call",
            context_window=32768,
            max_tokens=s.max_reply_tokens,
            temperature=0.0,
            timeout=s.timeout_s,
            max_retries=s.max_retries,
        )
    elif s.provider == "azure":
        from llama_index.llms.azure_openai import AzureOpenAI

        llm = AzureOpenAI(
            model=model,
            engine=model,  # the deployment name; name deployments after their model
            api_key=_key(s),
            azure_endpoint=_base_url(s, "the Azure endpoint, https://RESOURCE.openai.azure.com/"),
            api_version=AZURE_API_VERSION,
            max_tokens=s.max_reply_tokens,
            temperature=0.0,
            timeout=s.timeout_s,
            max_retries=s.max_retries,
        )
    elif s.provider == "anthropic":
        from llama_index.llms.anthropic import Anthropic

        llm = Anthropic(
            model=model,
            api_key=_key(s),
            base_url=s.base_url,
            # LlamaIndex's default of 512 output tokens would cut a cited answer short.
            max_tokens=s.max_reply_tokens,
            temperature=0.0,
            timeout=s.timeout_s,
            max_retries=s.max_retries,
        )
    elif s.provider == "cohere":
        from llama_index.llms.openai_like import OpenAILike

        llm = OpenAILike(
            model=model,
            api_base=s.base_url or COHERE_COMPAT_URL,
            api_key=_key(s),
            is_chat_model=True,
            is_function_calling_model=True,
            context_window=128000,
            max_tokens=s.max_reply_tokens,
            temperature=0.0,
            timeout=s.timeout_s,
            max_retries=s.max_retries,
        )
    else:  # pragma: no cover - LLMSettings validates the literal
        raise ConfigError(f"unknown LLM provider {s.provider!r}; set FOOTNOTE_LLM__PROVIDER")
    _check_model(llm, s)
    return llm


@cache
def _schema_in_json_object() -> type[OpenAILike]:
    """OpenAILike whose structured calls send ``{"type": "json_object", "schema": …}``.

    llama-cpp-python's server turns that schema into a grammar, and refuses OpenAI's
    ``{"type": "json_schema", …}`` (HTTP 500: "Input should be 'text' or 'json_object'"). LlamaIndex
    knows only the OpenAI form, so the one method that builds it is rewritten (the schema itself
    is still LlamaIndex's, strict).
    """
    from llama_index.llms.openai_like import OpenAILike

    # llama_index.llms.openai_like ships no type information: the base class is Any to mypy
    class SchemaInJsonObject(OpenAILike):  # type: ignore[misc]
        def _prepare_schema(
            self, llm_kwargs: dict[str, Any] | None, output_cls: type
        ) -> dict[str, Any]:
            kwargs: dict[str, Any] = super()._prepare_schema(llm_kwargs, output_cls)
            schema = kwargs["response_format"]["json_schema"]["schema"]
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
            return kwargs

    return SchemaInJsonObject


def provider_errors(s: LLMSettings) -> tuple[type[Exception], ...]:
    """What the provider's SDK raises when a call fails on its side or on the way: an HTTP error
    status (429, 5xx, 401…), a refused or dropped connection, a timeout, a reply it cannot read.
    A connection that drops while a reply streams (the answer step) reaches us as httpx's own
    ``TransportError``: both SDKs wrap httpx's errors only until the response has begun."""
    import httpx

    if s.provider == "anthropic":
        import anthropic

        return (anthropic.AnthropicError, httpx.TransportError)
    import openai  # openai, openai_like, azure and cohere all speak through the OpenAI SDK

    return (openai.OpenAIError, httpx.TransportError)


def check_reachable(s: LLMSettings, *llms: LLM) -> None:
    """Send each model one short message, so a wrong URL, key or model stops the start-up with the
    variable to fix instead of sending every step to the offline fallback."""
    from llama_index.core.base.llms.types import ChatMessage

    for llm in {id(llm): llm for llm in llms}.values():
        model = getattr(llm, "model", "?")
        try:
            # A few tokens are answer enough, whatever the model makes of the request.
            short = llm.model_copy(update={"max_tokens": PROBE_TOKENS})
            short.chat([ChatMessage(role="user", content=PROBE)])
        except provider_errors(s) as e:
            # Type and status only: a provider's message may echo part of the key.
            status = getattr(e, "status_code", None)
            got = f"{type(e).__name__}" + (f" (HTTP {status})" if status else "")
            if status in (401, 403):
                fix = f"the key was refused: set {KEY_VAR}"
            elif status == 404:
                fix = (
                    f"the model or the URL is unknown there: check {MODEL_VARS} and {BASE_URL_VAR}"
                )
            elif status is None:
                fix = f"the server cannot be reached: check {BASE_URL_VAR} and the network"
            else:
                fix = f"check {BASE_URL_VAR}, {KEY_VAR} and {MODEL_VARS}, or try again later"
            raise ConfigError(
                f"LLM provider {s.provider!r} did not answer a test message to model {model!r} "
                f"({got}); {fix}"
            ) from (None if status in (401, 403) else e)


def _key(s: LLMSettings) -> str:
    if s.api_key is None or not s.api_key.get_secret_value():
        raise ConfigError(f"LLM provider {s.provider!r} needs an API key: set {KEY_VAR}")
    return s.api_key.get_secret_value()


def _base_url(s: LLMSettings, what: str) -> str:
    if not s.base_url:
        raise ConfigError(f"LLM provider {s.provider!r} needs {what}: set {BASE_URL_VAR}")
    return s.base_url


def _check_model(llm: LLM, s: LLMSettings) -> None:
    """Fail at start-up, not on the first question, when the client does not know the model."""
    try:
        llm.metadata  # noqa: B018 - OpenAI/Azure look the model name up here
    except ValueError as e:
        raise ConfigError(
            f"model {getattr(llm, 'model', '?')!r} is unknown to the {s.provider!r} client; check "
            f"FOOTNOTE_LLM__MODEL / FOOTNOTE_LLM__CHEAP_MODEL, or use FOOTNOTE_LLM__PROVIDER=openai_like "
            f"for other OpenAI-compatible models"
        ) from e
