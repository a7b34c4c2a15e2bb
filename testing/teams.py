"""Teams on loopback: ``FakeConnector`` answers the Bot Framework connector routes
(``/v3/conversations/...``) a bot replies to and records every activity it sends;
``teams_activity`` and ``teams_channel_activity`` build the activities Teams posts to a bot."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable

from aiohttp import web

from testing.recorder import Call, Recorder, start_app


class FakeConnector(Recorder):
    """The Bot Framework connector a bot replies to (the activity's ``serviceUrl``).

    With ``authorize`` (e.g. ``LoopbackIdP.accepts``) it answers 401, as the real connector does,
    to any call whose ``Authorization`` header that function refuses; refused calls are recorded
    under the method ``"401"``.
    """

    def __init__(
        self,
        members: dict[str, list[dict]] | None = None,
        *,
        authorize: Callable[[str | None], bool] | None = None,
    ):
        super().__init__()
        self.members = members or {}  # conversation or team id → channel accounts
        self.authorize = authorize
        self._ids = itertools.count(1)

    async def start(self) -> FakeConnector:
        app = web.Application(middlewares=[self._check_token])
        app.router.add_post("/v3/conversations", self._create_conversation)
        app.router.add_post("/v3/conversations/{cid}/activities", self._activity)
        app.router.add_post("/v3/conversations/{cid}/activities/{aid}", self._activity)
        app.router.add_put("/v3/conversations/{cid}/activities/{aid}", self._activity)
        app.router.add_get("/v3/conversations/{cid}/pagedmembers", self._paged_members)
        app.router.add_get("/v3/conversations/{cid}/members", self._members)
        self.runner, self.url = await start_app(app)
        return self

    @web.middleware
    async def _check_token(self, request: web.Request, handler) -> web.StreamResponse:
        if self.authorize is not None and not self.authorize(request.headers.get("Authorization")):
            await self._record(Call("401", {"path": request.path}))
            return web.json_response(
                {"message": "Authorization has been denied for this request."}, status=401
            )
        return await handler(request)

    async def _activity(self, request: web.Request) -> web.Response:
        body = await request.json()
        reply = {"id": f"reply-{next(self._ids)}"}
        await self._record(
            Call(
                request.method + " " + request.match_info.get("aid", ""),
                {"conversation": request.match_info["cid"], "activity": body},
                result=reply,
            )
        )
        return web.json_response(reply)

    def activities(self, conversation: str) -> list[Call]:
        """Every activity sent into ``conversation`` (typing ones too), with the id it got."""
        return [
            c for c in self.calls if "activity" in c.args and c.args["conversation"] == conversation
        ]

    @staticmethod
    def stream_info(activity: dict) -> dict | None:
        """An activity's ``streaminfo`` entity (Teams' streaming protocol), if it has one."""
        return next(
            (e for e in activity.get("entities") or [] if e.get("type") == "streaminfo"), None
        )

    async def _create_conversation(self, request: web.Request) -> web.Response:
        """``POST /v3/conversations``: a new (1:1) conversation; its id is returned."""
        body = await request.json()
        members = [m.get("id") for m in body.get("members") or []]
        cid = f"a:1to1-{'-'.join(members)}-{next(self._ids)}"
        await self._record(Call("create_conversation", {"conversation": cid, "params": body}))
        return web.json_response({"id": cid, "activityId": None, "serviceUrl": None})

    def private_messages(self, user: str) -> list[dict]:
        """Messages sent into 1:1 conversations the bot opened with ``user``."""
        opened = {
            c.args["conversation"]
            for c in self.calls
            if c.method == "create_conversation"
            and user in [m.get("id") for m in c.args["params"].get("members") or []]
        }
        return [a for cid in opened for a in self.messages(cid)]

    async def _paged_members(self, request: web.Request) -> web.Response:
        members = self.members.get(request.match_info["cid"])
        await self._record(Call("pagedmembers", {"conversation": request.match_info["cid"]}))
        if members is None:
            return web.json_response({"error": {"code": "NotFound"}}, status=404)
        return web.json_response({"members": members, "continuationToken": None})

    async def _members(self, request: web.Request) -> web.Response:
        return web.json_response(self.members.get(request.match_info["cid"], []))

    def messages(self, conversation: str | None = None) -> list[dict]:
        return [
            c.args["activity"]
            for c in self.calls
            if "activity" in c.args
            and c.args["activity"].get("type") == "message"
            and (conversation is None or c.args["conversation"] == conversation)
        ]

    @staticmethod
    def card_text(card: dict) -> str:
        """A card's text, one line per block; a run that opens a URL as ``[text](url)``."""
        lines = []
        for block in card.get("body") or []:
            if block.get("type") == "RichTextBlock":
                runs = block.get("inlines") or []
                lines.append(
                    "".join(
                        f"[{r['text']}]({r['selectAction']['url']})"
                        if (r.get("selectAction") or {}).get("url")
                        else r.get("text", "")
                        for r in runs
                    )
                )
            else:
                lines.append(block.get("text", ""))
        return "\n".join(lines)

    @staticmethod
    def card(activity: dict) -> dict | None:
        for att in activity.get("attachments") or []:
            if att.get("contentType") == "application/vnd.microsoft.card.adaptive":
                return att["content"]
        return None


def teams_activity(
    text: str,
    *,
    service_url: str,
    user: str = "29:alice",
    name: str = "Alice Moreau",
    conversation: dict | None = None,
    entities: list | None = None,
    value: dict | None = None,
    channel_data: dict | None = None,
) -> dict:
    return {
        "type": "message",
        "id": f"1{uuid.uuid4().int % 10**12}",
        "timestamp": "2026-02-01T10:00:00.000Z",
        "serviceUrl": service_url,
        "channelId": "msteams",
        "from": {"id": user, "name": name, "aadObjectId": f"aad-{user}"},
        "conversation": conversation
        or {"id": f"a:personal-{user}", "conversationType": "personal", "tenantId": "t-northwind"},
        "recipient": {"id": "28:footnote-bot", "name": "Footnote"},
        "text": text,
        "textFormat": "plain",
        "locale": "en-US",
        "entities": entities or [],
        "channelData": channel_data or {"tenant": {"id": "t-northwind"}},
        **({"value": value} if value is not None else {}),
    }


BOT_ACCOUNT = {"id": "28:footnote-bot", "name": "Footnote"}


def teams_channel_activity(
    text: str,
    *,
    service_url: str,
    team: str,
    channel: str,
    message_id: str = "1",
    user: str = "29:alice",
    name: str = "Alice Moreau",
    mention: bool = True,
) -> dict:
    """A message in a Teams channel thread, @mentioning the bot unless ``mention`` is False."""
    entities = (
        [{"type": "mention", "mentioned": BOT_ACCOUNT, "text": "<at>Footnote</at>"}]
        if mention
        else []
    )
    return teams_activity(
        f"<at>Footnote</at> {text}" if mention else text,
        service_url=service_url,
        user=user,
        name=name,
        conversation={
            "id": f"{channel};messageid={message_id}",
            "conversationType": "channel",
            "isGroup": True,
            "tenantId": "t-northwind",
        },
        entities=entities,
        channel_data={
            "teamsChannelId": channel,
            "teamsTeamId": team,
            "channel": {"id": channel},
            "team": {"id": team},
            "tenant": {"id": "t-northwind"},
        },
    )
