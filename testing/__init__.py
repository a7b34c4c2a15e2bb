"""Fakes of the services Footnote talks to that tests and benchmarks cannot reach, each speaking
that service's documented wire format on 127.0.0.1, so the real SDKs run against them:

* ``testing.slack``  Slack's Web API, and signed Events API / interactivity payloads to send.
* ``testing.teams``  the Bot Framework connector a bot replies to, and Teams activities to send.
* ``testing.idp``    Microsoft's identity services (Bot Framework tokens, Entra ID) over HTTPS.
* ``testing.llm``    an OpenAI-compatible chat server, and a scripted LlamaIndex LLM.

Our own components are never faked here: tests run the real embedders, Qdrant Edge, Redis and
PostgreSQL. Benchmarks import this package without importing ``tests``.
"""
