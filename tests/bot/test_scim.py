"""The SCIM store and the directory it makes, on SQLite and on the real PostgreSQL: what the
identity provider sends is what the directory says, and nothing else."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from bot.identity.scim import ScimDirectory, ScimError, ScimStore
from ingest.settings import DatabaseSettings
from ingest.sources.state import SyncState


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> DatabaseSettings:
    if request.param == "sqlite":
        return DatabaseSettings(url=SecretStr(f"sqlite:///{tmp_path / 'state.db'}"))
    return DatabaseSettings(url=SecretStr(request.getfixturevalue("postgres_url")))


@pytest.fixture
def store(database, tmp_path):
    s = ScimStore.open(database, tmp_path)
    yield s
    s.close()


def user(store: ScimStore, name: str, **extra) -> str:
    return store.create_user({"userName": name, **extra})["id"]


def test_a_user_is_found_by_user_name_email_or_external_id_with_every_group(store):
    ann = user(
        store,
        "Ann@Acme.example",
        externalId="aad-7f3e",
        displayName="Ann Lee",
        emails=[{"value": "ann.lee@acme.example", "primary": True}, {"value": "a@x.example"}],
    )
    store.create_group({"displayName": "hr", "externalId": "grp-1", "members": [{"value": ann}]})
    store.create_group({"displayName": "managers", "members": [{"value": ann}]})
    store.create_group({"displayName": "finance"})
    directory = ScimDirectory(store)

    for key in ("ann@acme.example", "ANN.LEE@acme.example", "aad-7f3e"):
        person = directory.find(key)
        assert person is not None, key
        assert person.user_id == "Ann@Acme.example" and person.name == "Ann Lee"
        assert person.email == "ann.lee@acme.example"
        assert person.groups == ("hr", "grp-1", "managers")  # names, and ids where sent
        assert person.teams_id == "aad-7f3e"  # Teams sends the Entra object id
    assert directory.find("AAD-7F3E") is None  # object ids are compared exactly
    assert directory.find("") is None and directory.find("bob@acme.example") is None


def test_deactivated_or_deleted_people_are_unknown_and_leave_their_groups(store):
    ann, bob = user(store, "ann@acme.example"), user(store, "bob@acme.example")
    hr = store.create_group({"displayName": "hr", "members": [{"value": ann}, {"value": bob}]})[
        "id"
    ]

    store.patch_user(ann, [{"op": "replace", "value": {"active": False}}])
    assert ScimDirectory(store).find("ann@acme.example") is None
    store.patch_user(ann, [{"op": "Replace", "path": "active", "value": "True"}])
    assert ScimDirectory(store).find("ann@acme.example") is not None

    store.delete_user(bob)
    assert ScimDirectory(store).find("bob@acme.example") is None
    assert [m["value"] for m in store.group(hr)["members"]] == [ann]
    with pytest.raises(ScimError) as err:
        store.user(bob)
    assert err.value.status == 404


def test_group_membership_follows_add_remove_and_replace(store):
    ann, bob, cy = (user(store, f"{n}@acme.example") for n in ("ann", "bob", "cy"))
    hr = store.create_group({"displayName": "hr"})["id"]

    def members() -> list[str]:
        return sorted(m["display"] for m in store.group(hr)["members"])

    store.patch_group(
        hr, [{"op": "Add", "path": "members", "value": [{"value": ann}, {"value": bob}]}]
    )
    assert members() == ["ann@acme.example", "bob@acme.example"]
    store.patch_group(hr, [{"op": "remove", "path": "members", "value": [{"value": ann}]}])
    assert members() == ["bob@acme.example"]
    store.patch_group(hr, [{"op": "replace", "path": "members", "value": [{"value": cy}]}])
    assert members() == ["cy@acme.example"]
    store.replace_group(hr, {"displayName": "people", "members": [{"value": ann}]})
    assert members() == ["ann@acme.example"] and store.group(hr)["displayName"] == "people"
    assert ScimDirectory(store).find("ann@acme.example").groups == ("people",)
    with pytest.raises(ScimError):  # a member that is no user: nothing changes
        store.patch_group(hr, [{"op": "add", "path": "members", "value": [{"value": "ghost"}]}])
    assert members() == ["ann@acme.example"]


def test_it_shares_the_database_with_sync_state_under_its_own_schema_version(database, tmp_path):
    sync = SyncState.open(database, tmp_path)
    scim = ScimStore.open(database, tmp_path)
    try:
        assert scim.schema_version() == ScimStore.MIGRATIONS[-1][0]
        assert sync.schema_version() == SyncState.MIGRATIONS[-1][0]
        user(scim, "ann@acme.example")
        reopened = ScimStore.open(database, tmp_path)
        assert reopened.users("userName", "ann@acme.example")[0]["userName"] == "ann@acme.example"
        reopened.close()
    finally:
        scim.close()
        sync.close()
