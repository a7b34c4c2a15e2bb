"""A person's principals: what every search, tool and document link filters with."""

from __future__ import annotations

from bot.identity.directory import FileDirectory, Person, groups_of
from ingest.access import normalise_acl


def test_a_person_reads_as_their_groups_and_their_lower_cased_email():
    ann = Person("ann", "Ann", email=" Ann@X.com ", groups=("hr", "managers"))
    assert ann.principals == ("hr", "managers", "user:ann@x.com")
    assert Person("bot", "Bot", groups=("hr",)).principals == ("hr",)  # no e-mail: groups only


def test_someone_the_directory_lacks_reads_as_nobody(tmp_path):
    path = tmp_path / "directory.yaml"
    path.write_text("users:\n  ann: {email: ann@x.com, groups: [hr]}\n")
    lookup = groups_of(FileDirectory.load(path))
    assert lookup("ann") == ("hr", "user:ann@x.com") and lookup("nobody") == ()


def test_folder_access_rules_name_people_as_askers_carry_them():
    acl = normalise_acl(["group:hr", "User:Ann@X.com", "user: Bob@Y.org", "*"])
    assert acl == ["*", "hr", "user:ann@x.com", "user:bob@y.org"]
