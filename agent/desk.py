"""The ticket desk and the CRM: two systems outside Footnote, each behind a small interface.

The demo implementations keep their data in SQLite under the data folder; a real desk (Jira,
Zendesk) or CRM (Salesforce, HubSpot) implements the same two or three methods.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

# A customer with their plan and orders, as the CRM's JSON has them.
CustomerRecord = dict[str, Any]


@dataclass
class Ticket:
    id: str
    link: str
    title: str
    created: bool  # False when the idempotency key had already filed it


class TicketDesk(Protocol):
    def create(self, title: str, body: str, requester: str, idempotency_key: str) -> Ticket: ...


class SqliteTicketDesk:
    def __init__(self, path: Path, base_url: str = "https://desk.example/tickets"):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        self.base_url = base_url
        with self._db:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS tickets (n INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT UNIQUE, "
                "title TEXT, body TEXT, requester TEXT, created REAL)"
            )

    def create(self, title: str, body: str, requester: str, idempotency_key: str) -> Ticket:
        with self._lock, self._db:
            cur = self._db.execute(
                "INSERT OR IGNORE INTO tickets (key, title, body, requester, created) VALUES (?, ?, ?, ?, ?)",
                (idempotency_key, title, body, requester, time.time()),
            )
            created = cur.rowcount == 1
            n, stored_title = self._db.execute(
                "SELECT n, title FROM tickets WHERE key = ?", (idempotency_key,)
            ).fetchone()
        ticket_id = f"HELP-{1000 + n}"
        return Ticket(ticket_id, f"{self.base_url}/{ticket_id}", stored_title, created)

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM tickets").fetchone()[0])

    def forget(self, requesters: Collection[str]) -> int:
        """Delete the tickets these people filed (a real desk has its own erasure process)."""
        people = sorted(set(requesters))
        if not people:
            return 0
        with self._lock, self._db:
            cur = self._db.execute(
                f"DELETE FROM tickets WHERE requester IN ({', '.join('?' * len(people))})", people
            )
        return cur.rowcount

    def close(self) -> None:
        self._db.close()


class CRM(Protocol):
    def customer(self, customer_id: str) -> CustomerRecord | None:
        """The customer with their plan and orders, or ``None``."""
        ...


class SqliteCRM:
    """The demo CRM, loaded from ``examples/crm.json`` into SQLite on first use."""

    def __init__(self, path: Path, seed: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        with self._db:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS customers (id TEXT PRIMARY KEY, data TEXT)"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS orders (order_id TEXT PRIMARY KEY, customer_id TEXT, data TEXT)"
            )
            if seed.exists() and not self._db.execute("SELECT 1 FROM customers LIMIT 1").fetchone():
                data = json.loads(seed.read_text(encoding="utf-8"))
                for c in data.get("customers", []):
                    self._db.execute(
                        "INSERT INTO customers VALUES (?, ?)", (str(c["id"]), json.dumps(c))
                    )
                for o in data.get("orders", []):
                    self._db.execute(
                        "INSERT INTO orders VALUES (?, ?, ?)",
                        (str(o["order_id"]), str(o["customer_id"]), json.dumps(o)),
                    )

    def customer(self, customer_id: str) -> CustomerRecord | None:
        row = self._db.execute(
            "SELECT data FROM customers WHERE id = ?", (str(customer_id),)
        ).fetchone()
        if row is None:
            return None
        orders = self._db.execute(
            "SELECT data FROM orders WHERE customer_id = ?", (str(customer_id),)
        ).fetchall()
        record: CustomerRecord = json.loads(row["data"])
        return record | {"orders": [json.loads(o["data"]) for o in orders]}
