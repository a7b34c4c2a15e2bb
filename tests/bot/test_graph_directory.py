"""The directory in Microsoft Entra ID: people and their transitive groups from the loopback
Microsoft Graph (``testing/graph.py``), and the Redis cache in front of it (real Redis)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
import redis
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from agent.traces import SqliteTraceStore
from bot.app import build_deps
from bot.chat.conversation import Conversation, Member
from bot.chat.conversation_state import ConversationState
from bot.cli.asker import person_for
from bot.identity.admin_access import AdminAccess
from bot.identity.directory import DirectoryUnavailable
from bot.identity.directory_cache import CachedDirectory
from bot.identity.graph_directory import GraphDirectory, GraphDirectoryClient
from bot.settings import DirectorySettings, RedisSettings, ScimSettings, Settings
from bot.web.links import LinkSigner
from bot.web.server import build_app
from ingest.errors import ConfigError
from ingest.settings import GraphSettings
from ingest.sources.graph_client import CLIENT_VAR, SECRET_VAR, TENANT_VAR
from testing.admin_data import Library
from testing.graph import LoopbackGraph
from tests.bot.test_admin import make_settings

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
def graph():
    fake = LoopbackGraph().start()
    yield fake
    fake.close()


def directory(graph: LoopbackGraph, secret: str | None = None, **kw) -> GraphDirectory:
    waits: list[float] = []
    client = GraphDirectoryClient(
        tenant_id=graph.tenant,
        client_id=graph.client_id,
        client_secret=SecretStr(secret or graph.client_secret),
        authority=graph.url,
        graph_url=f"{graph.url}/v1.0",
        sleep=waits.append,
        retries=2,
        max_wait_s=5.0,
    )
    found = GraphDirectory(client, **kw)
    found.waits = waits  # type: ignore[attr-defined]
    return found


def graph_calls(graph: LoopbackGraph) -> list[tuple[str, dict[str, str], int]]:
    return [(p, q, s) for m, p, q, s in graph.requests if m == "GET"]


@pytest.fixture
def prefix():
    name = f"footnote-test-{uuid.uuid4().hex[:8]}:"
    yield name
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(match=name + "*"))
    if keys:
        client.delete(*keys)
    client.close()


def cached(inner, prefix: str, url: str = REDIS_URL, **kw) -> CachedDirectory:
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=1.0)
    return CachedDirectory(inner, client, prefix=prefix, **kw)


# --- people and groups ---------------------------------------------------------------------------


def test_a_teams_user_by_object_id_reads_as_every_group_they_are_in_transitively(graph):
    alice = graph.user("alice@acme.example", "Alice Moreau")
    tier2 = graph.group("Support Tier 2", [alice])
    support = graph.group("Support", [tier2])  # alice is in it through Tier 2
    graph.group("Finance", [graph.user("bob@acme.example")])

    person = directory(graph).find(alice.id)

    assert person is not None
    assert person.name == "Alice Moreau" and person.email == "alice@acme.example"
    assert person.teams_id == alice.id and person.user_id == "alice@acme.example"
    assert set(person.groups) == {tier2.id, support.id}  # bare object ids, as ACLs hold them
    assert set(person.principals) == {tier2.id, support.id, "user:alice@acme.example"}
    [(path, query, _)] = [c for c in graph_calls(graph) if c[0].endswith("microsoft.graph.group")]
    assert path == f"/v1.0/users/{alice.id}/transitiveMemberOf/microsoft.graph.group"
    assert query["$count"] == "true"  # the OData cast is an advanced query


def test_a_slack_user_by_email_is_found_by_mail_or_principal_name(graph):
    bob = graph.user("bob@acme.example", "Bob Okafor")
    eng = graph.group("Engineering", [bob])
    mailless = graph.user("svc@acme.example", mail=False)  # no mailbox: only the UPN matches

    person = directory(graph).find("Bob@Acme.example")
    assert person is not None and person.teams_id == bob.id and person.groups == (eng.id,)
    [query] = [q for p, q, _ in graph_calls(graph) if p == "/v1.0/users"]
    assert query["$filter"] == (
        "mail eq 'Bob@Acme.example' or userPrincipalName eq 'Bob@Acme.example'"
    )
    other = directory(graph).find("svc@acme.example")
    assert other is not None and other.teams_id == mailless.id
    assert other.email == "svc@acme.example"  # the UPN, when Graph has no mail


def test_a_quote_in_an_address_is_escaped_not_obeyed(graph):
    obrien = graph.user("o'brien@acme.example")
    assert directory(graph).find("o'brien@acme.example").teams_id == obrien.id  # type: ignore[union-attr]
    # an address that tries to widen the filter finds nobody, and Graph is not asked anything else
    assert directory(graph).find("x@acme.example' or userType eq 'Member") is None
    assert [s for *_, s in graph_calls(graph)] == [200, 200, 200]


def test_keys_entra_id_does_not_have_are_not_sent_to_graph(graph):
    graph.user("alice@acme.example")
    found = directory(graph)
    assert found.find("U0ALICE01") is None  # a Slack user id: the adapter asks by e-mail next
    assert found.find("alice") is None
    assert found.find("") is None
    assert graph.requests == []


def test_someone_entra_id_lacks_is_unknown(graph):
    found = directory(graph)
    assert found.find("00000000-0000-4000-8000-000000000000") is None  # 404
    assert found.find("nobody@acme.example") is None  # an empty list


def test_a_disabled_account_and_a_guest_read_nothing(graph):
    support = graph.group("Support")
    gone = graph.user("gone@acme.example", enabled=False)
    guest = graph.user("partner@contoso.example", guest=True)
    graph.add_member(support, gone)
    graph.add_member(support, guest)
    found = directory(graph)
    assert found.find(gone.id) is None and found.find("gone@acme.example") is None
    assert found.find(guest.id) is None and found.find("partner@contoso.example") is None
    assert not [p for p, *_ in graph_calls(graph) if p.endswith("microsoft.graph.group")]


def test_every_page_of_groups_is_read(graph):
    graph.member_page_size = 2
    carol = graph.user("carol@acme.example")
    groups = [graph.group(f"Team {n}", [carol]) for n in range(5)]
    person = directory(graph).find(carol.id)
    assert person is not None and set(person.groups) == {g.id for g in groups}
    assert graph.count("memberOf") == 3  # 2 + 2 + 1, following @odata.nextLink


def test_group_names_from_the_mapping_file_are_added_beside_the_object_id(graph, tmp_path):
    dana = graph.user("dana@acme.example")
    hr = graph.group("Human Resources", [dana])
    mapping = tmp_path / "groups.yaml"
    mapping.write_text(f"{hr.id}: [hr, admins]\n")
    found = GraphDirectory.from_settings(
        GraphSettings(
            tenant_id=graph.tenant,
            client_id=graph.client_id,
            client_secret=SecretStr(graph.client_secret),
            authority=graph.url,
            url=f"{graph.url}/v1.0",
        ),
        mapping,
    )
    person = found.find(dana.id)
    assert person is not None and person.groups == (hr.id, "hr", "admins")


def test_throttling_is_waited_out_as_graph_asks(graph):
    erin = graph.user("erin@acme.example")
    graph.throttle(2, "3", path="/users/")
    found = directory(graph)
    assert found.find(erin.id) is not None
    assert found.waits == [3.0, 3.0]  # type: ignore[attr-defined]


def test_throttled_past_the_retries_is_unavailable_not_unknown(graph):
    frank = graph.user("frank@acme.example")
    graph.throttle(10, "1", path="/users/", status=503)
    with pytest.raises(DirectoryUnavailable, match="503 after 3 tries"):
        directory(graph).find(frank.id)


def test_graph_out_of_reach_is_unavailable(graph):
    found = directory(graph)
    graph.close()
    with pytest.raises(DirectoryUnavailable, match="cannot reach"):
        found.find("someone@acme.example")


def test_a_refused_secret_names_the_variable_to_fix(graph):
    with pytest.raises(DirectoryUnavailable, match=SECRET_VAR):
        directory(graph, secret="wrong").find("someone@acme.example")


def test_graph_chosen_without_credentials_names_the_variables():
    with pytest.raises(ConfigError) as err:
        GraphDirectory.from_settings(GraphSettings(tenant_id="t"))
    assert all(var in str(err.value) for var in (TENANT_VAR, CLIENT_VAR, SECRET_VAR))
    with pytest.raises(ConfigError, match="FOOTNOTE_GRAPH__URL"):
        GraphDirectory.from_settings(
            GraphSettings(
                tenant_id="t", client_id="c", client_secret=SecretStr("s"), url="http://graph.ms"
            )
        )


def test_serve_stops_on_a_graph_directory_without_credentials(tmp_path):
    deps = build_deps(Settings(data_dir=tmp_path, directory=DirectorySettings(source="graph")))
    with pytest.raises(ConfigError, match=f"set {TENANT_VAR}, {CLIENT_VAR} and {SECRET_VAR}"):
        _ = deps.directory


def test_the_cli_acts_as_someone_entra_id_knows_and_assumes_nobody(graph, tmp_path, prefix):
    olga = graph.user("olga@acme.example", "Olga Berg")
    deps = build_deps(
        Settings(
            data_dir=tmp_path,
            directory=DirectorySettings(source="graph"),
            redis=RedisSettings(key_prefix=prefix),
            graph=GraphSettings(
                tenant_id=graph.tenant,
                client_id=graph.client_id,
                client_secret=SecretStr(graph.client_secret),
                authority=graph.url,
                url=f"{graph.url}/v1.0",
            ),
        )
    )
    try:
        with pytest.raises(ConfigError, match="say who is asking.*Microsoft Entra ID"):
            person_for(SimpleNamespace(user=None), deps)  # not the demo's alice
        with pytest.raises(ConfigError, match="unknown user 'alice'.*Microsoft Entra ID"):
            person_for(SimpleNamespace(user="alice"), deps)
        found = person_for(SimpleNamespace(user="olga@acme.example"), deps, announce=False)
        assert found.teams_id == olga.id
    finally:
        deps.close()


def test_the_source_follows_the_settings():
    scim = ScimSettings(token=SecretStr("t" * 32))
    assert Settings().directory_source == "file"
    assert Settings(scim=scim).directory_source == "scim"
    assert Settings(directory=DirectorySettings(source="graph")).directory_source == "graph"
    with pytest.raises(ConfigError, match="FOOTNOTE_SCIM__TOKEN"):
        _ = Settings(directory=DirectorySettings(source="scim")).directory_source
    with pytest.raises(ConfigError, match="unset one of them"):
        _ = Settings(directory=DirectorySettings(source="graph"), scim=scim).directory_source


def test_the_source_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("FOOTNOTE_DIRECTORY__SOURCE", "graph")
    monkeypatch.setenv("FOOTNOTE_DIRECTORY__CACHE_TTL_S", "120")
    settings = Settings()
    assert settings.directory_source == "graph" and settings.directory.cache_ttl_s == 120
    assert settings.directory_file.name == "directory.yaml"  # FOOTNOTE_DIRECTORY_FILE untouched


# --- the cache -----------------------------------------------------------------------------------


def test_a_cached_person_is_not_asked_for_again(graph, prefix):
    gina = graph.user("gina@acme.example")
    graph.group("Support", [gina])
    cache = cached(directory(graph), prefix)
    first = cache.find("gina@acme.example")
    asked = len(graph.requests)
    again = cache.find("gina@acme.example")
    assert again == first and again is not None
    assert len(graph.requests) == asked  # no second trip to Graph
    other = cached(directory(graph), prefix)  # another replica shares the cache
    assert other.find("gina@acme.example") == first and len(graph.requests) == asked


def test_a_group_change_shows_once_the_ttl_has_passed(graph, prefix):
    hank = graph.user("hank@acme.example")
    support = graph.group("Support", [hank])
    cache = cached(directory(graph), prefix, ttl_s=1)
    assert cache.find(hank.id).groups == (support.id,)  # type: ignore[union-attr]
    graph.remove_member(support, hank)
    assert cache.find(hank.id).groups == (support.id,)  # type: ignore[union-attr]
    time.sleep(1.2)
    assert cache.find(hank.id).groups == ()  # type: ignore[union-attr]


def test_nobody_is_remembered_for_the_shorter_ttl(graph, prefix):
    cache = cached(directory(graph), prefix, ttl_s=60, negative_ttl_s=1)
    assert cache.find("ivy@acme.example") is None
    graph.user("ivy@acme.example")
    assert cache.find("ivy@acme.example") is None  # still the cached "nobody"
    time.sleep(1.2)
    assert cache.find("ivy@acme.example") is not None


def test_an_unavailable_directory_is_not_cached(graph, prefix):
    jack = graph.user("jack@acme.example")
    cache = cached(directory(graph), prefix)
    graph.throttle(3, "0", path="/users/")
    with pytest.raises(DirectoryUnavailable):
        cache.find(jack.id)
    assert cache.find(jack.id) is not None


def test_forget_drops_a_cached_lookup(graph, prefix):
    kim = graph.user("kim@acme.example")
    cache = cached(directory(graph), prefix)
    assert cache.find(kim.id).groups == ()  # type: ignore[union-attr]
    graph.group("Finance", [kim])
    cache.forget(kim.id)
    assert len(cache.find(kim.id).groups) == 1  # type: ignore[union-attr]


def test_addresses_stay_out_of_redis_key_names(graph, prefix):
    graph.user("lee@acme.example")
    cached(directory(graph), prefix).find("lee@acme.example")
    client = redis.Redis.from_url(REDIS_URL)
    keys = [k.decode() for k in client.scan_iter(match=prefix + "*")]
    client.close()
    assert len(keys) == 1 and "lee" not in keys[0]


def test_keys_graph_cannot_have_skip_redis_too(graph, prefix):
    found = directory(graph)
    cache = cached(found, prefix, worth=found.asks_about)
    assert cache.find("U0ALICE01") is None
    client = redis.Redis.from_url(REDIS_URL)
    assert list(client.scan_iter(match=prefix + "*")) == []
    client.close()
    assert graph.requests == []


def test_without_redis_every_lookup_goes_to_graph(graph, prefix):
    mia = graph.user("mia@acme.example")
    cache = cached(directory(graph), prefix, url="redis://127.0.0.1:1/0")  # nothing listens
    assert cache.find(mia.id) is not None
    assert cache.find(mia.id) is not None
    assert graph.count("user") == 2  # uncached, but answered


# --- the admin page asks the same directory ------------------------------------------------------


async def test_the_admin_page_says_when_the_directory_cannot_be_asked(graph, tmp_path):
    sam = graph.user("sam@acme.example", "Sam Admin")
    it = graph.group("IT admins", [sam])
    people = directory(graph, group_names={it.id: ("admins",)})
    settings = make_settings(tmp_path)
    state = ConversationState.from_settings(settings.redis)
    app = build_app(
        settings,
        SimpleNamespace(directory=people),  # type: ignore[arg-type]
        Library(),
        state,
        SqliteTraceStore(tmp_path / "traces.sqlite"),
    )
    client = TestClient(TestServer(app), headers={"Origin": "http://127.0.0.1:3999"})
    await client.start_server()
    access = AdminAccess(
        key=LinkSigner.from_settings(settings).derive("admin"),
        public_url="http://127.0.0.1:3999",
        directory=people,
        admin_groups=settings.admin_groups,
        redis=state.client,
        redis_prefix=settings.redis.key_prefix,
    )
    try:
        token = urlsplit(access.link("sam@acme.example")).query.split("t=", 1)[1]
        r = await client.post("/admin/signin", data={"t": token}, allow_redirects=False)
        assert r.status == 303, await r.text()
        r = await client.get("/admin", allow_redirects=False)
        assert r.status == 200 and "Overview" in await r.text()
        graph.close()  # every page checks admin rights again: now nobody can say
        r = await client.get("/admin", allow_redirects=False)
        text = await r.text()
        assert r.status == 503 and "company directory is not answering" in text
        assert "Overview</a>" not in text
    finally:
        await client.close()
        await state.close()


# --- lookups off the event loop -------------------------------------------------------------------


async def test_a_slow_graph_lookup_does_not_hold_up_the_event_loop(graph):
    """While the asker waits on Graph, other work on the loop (other people's turns) goes on."""
    nora = graph.user("nora@acme.example")
    graph.hold = threading.Event()  # Graph answers only once another turn has run on the loop
    chat = Conversation(
        None,  # type: ignore[arg-type]  # who asks is all this test looks at
        None,  # type: ignore[arg-type]
        directory(graph),
        None,  # type: ignore[arg-type]
        platform="slack",
        private_chat="direct message",
    )
    order: list[str] = []

    async def other_turn() -> None:
        order.append("other turn")
        graph.hold.set()  # type: ignore[union-attr]

    other = asyncio.create_task(other_turn())
    person = await chat.person(Member((nora.id,)))
    order.append("lookup done")
    await other
    assert person is not None and person.teams_id == nora.id
    # a lookup on the loop itself would let no other turn run until Graph gave up waiting
    assert order == ["other turn", "lookup done"]
