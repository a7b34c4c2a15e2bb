"""The app manifests an admin uploads: the scopes, events and shapes Slack and Teams require."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_slack_manifest_subscribes_to_what_the_adapter_handles():
    m = yaml.safe_load((DEPLOY / "slack-manifest.yaml").read_text())
    scopes = set(m["oauth_config"]["scopes"]["bot"])
    assert {
        "app_mentions:read",
        "chat:write",
        "im:history",
        "im:read",
        "im:write",
        "users:read",
        "users:read.email",
        "channels:read",
        "groups:read",
        "assistant:write",  # the side panel's status line and suggested prompts
    } <= scopes
    events = m["settings"]["event_subscriptions"]
    # channel messages only when thread follow-ups are turned on (commented out below)
    assert set(events["bot_events"]) == {
        "message.im",
        "app_mention",
        "assistant_thread_started",
        "assistant_thread_context_changed",
    }
    assert m["features"]["assistant_view"]["assistant_description"]
    # Slack delivers a message.* event only with its history scope
    history_scope = {
        "message.im": "im:history",
        "message.channels": "channels:history",
        "message.groups": "groups:history",
    }
    assert {history_scope[e] for e in events["bot_events"] if e in history_scope} <= scopes
    assert events["request_url"] == "https://YOUR-HOST/slack/events"
    assert m["settings"]["interactivity"] == {
        "is_enabled": True,
        "request_url": "https://YOUR-HOST/slack/events",
    }
    # /footnote admin: signed and delivered like events, handled by the Bolt app's command
    [command] = m["features"]["slash_commands"]
    assert command["command"] == "/footnote" and command["usage_hint"] == "admin"
    assert command["url"] == "https://YOUR-HOST/slack/events" and "commands" in scopes
    assert len(command["description"]) <= 100  # Slack's limit
    assert m["features"]["app_home"]["messages_tab_enabled"] is True
    assert m["features"]["bot_user"]["display_name"]
    assert len(m["display_information"]["long_description"]) >= 175  # Slack's minimum when present


def test_slack_manifest_ships_thread_follow_ups_off_and_marked():
    """Those events and scopes make Slack send every channel message: they ship commented out,
    marked, so an admin who turns follow-ups on knows exactly which four lines to uncomment, and
    uncommented they form a valid subscription (each message.* event with its history scope)."""
    text = (DEPLOY / "slack-manifest.yaml").read_text()
    items = ("channels:history", "groups:history", "message.channels", "message.groups")
    for item in items:
        (line,) = [x for x in text.splitlines() if re.match(rf"\s*# - {re.escape(item)}\b", x)]
        assert "thread follow-ups only" in line, line
    enabled = yaml.safe_load(
        "\n".join(
            x.replace("# - ", "- ", 1) if any(f"# - {i}" in x for i in items) else x
            for x in text.splitlines()
        )
    )
    events = set(enabled["settings"]["event_subscriptions"]["bot_events"])
    assert {"message.channels", "message.groups"} <= events
    assert {"channels:history", "groups:history"} <= set(enabled["oauth_config"]["scopes"]["bot"])


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_teams_manifest_has_the_v1_16_required_shape():
    folder = DEPLOY / "teams"
    m = json.loads((folder / "manifest.json").read_text())
    assert m["manifestVersion"] == "1.16" and "v1.16" in m["$schema"]
    for key in ("version", "id", "developer", "name", "description", "icons", "accentColor"):
        assert key in m
    guid = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    assert re.fullmatch(r"\d+\.\d+\.\d+", m["version"]) and re.fullmatch(guid, m["id"])
    assert len(m["name"]["short"]) <= 30 and len(m["name"]["full"]) <= 100
    assert len(m["description"]["short"]) <= 80 and len(m["description"]["full"]) <= 4000
    assert re.fullmatch(r"#[0-9a-fA-F]{6}", m["accentColor"])
    for key in ("name", "websiteUrl", "privacyUrl", "termsOfUseUrl"):
        assert m["developer"][key]
    (bot,) = m["bots"]
    assert re.fullmatch(guid, bot["botId"])
    assert set(bot["scopes"]) >= {"personal", "team"} and set(bot["scopes"]) <= {
        "personal",
        "team",
        "groupChat",
    }
    assert png_size(folder / m["icons"]["color"]) == (192, 192)
    assert png_size(folder / m["icons"]["outline"]) == (32, 32)
