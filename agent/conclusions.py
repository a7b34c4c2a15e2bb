"""Tool facts with the policy that applies to them: the conclusion, not only the facts.

"Can customer #4471 still get a refund?" is answered by two sources: the CRM says the order was
placed 76 days ago on a monthly plan; the refund policy says monthly plans are refundable within
30 days. The answer states both, each cited, and what follows: the window has passed. Two kinds of
conclusion are drawn, each from values the units state (``agent/values``), never from wording:

- a window: a rule "within N days (of the order date)" for the order's billing (monthly, annual),
  and the order's age in days → within or outside;
- a total: a price "N EUR per user per month" for the plan or add-on the question names, and the
  customer's seats → seats × price.

The CRM record itself is a passage (``tool_passage``), cited like any document.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import yaml

from agent.desk import CustomerRecord
from agent.messages import say
from agent.passages import Passage, ToolRecord
from agent.units import Unit, units_of
from agent.values import quantities, ranges
from ingest.errors import ConfigError

TOOL = "query_crm"
_LISTS = ("refund", "charge", "period", "per_month", "monthly", "annual", "per_user_month")
_WITHOUT_SPACES = ("zh", "ja")  # languages whose words are matched anywhere in the text


@dataclass(frozen=True)
class _Words:
    """What ``agent/words/*.yaml`` say, as patterns: every language's words together."""

    refund: re.Pattern[str]  # a question about getting money back
    total: re.Pattern[str]  # a question about what a plan costs for a period
    billing: dict[str, re.Pattern[str]]  # an order's billing ("monthly") → how a rule says it
    per_user_month: re.Pattern[str]  # a price for each seat and month


def _pattern(words: Sequence[tuple[str, str]]) -> str:
    """One alternation of (language, word): whole words; a stem ("місяч-") inside any word, as
    in "щомісячний"; and in a language written without spaces, anywhere."""
    out = []
    for lang, word in words:
        body = r"\s+".join(re.escape(w) for w in word.rstrip("-").split())
        if lang in _WITHOUT_SPACES or word.endswith("-"):
            out.append(body)
        else:
            out.append(rf"\b{body}\b")
    return "|".join(out) or r"(?!)"


@functools.cache
def _words() -> _Words:
    return read_words(resources.files("agent") / "words")


def read_words(folder: Traversable) -> _Words:
    """Every ``<lang>.yaml`` of ``folder``; a list the code does not read names the file."""
    lists: dict[str, list[tuple[str, str]]] = {name: [] for name in _LISTS}
    for f in sorted(
        (f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name
    ):
        lang = f.name.removesuffix(".yaml")
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        unknown = set(data) - set(_LISTS)
        if unknown:
            raise ConfigError(f"agent/words/{f.name}: unknown list(s) {sorted(unknown)}")
        for name, words in data.items():
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                raise ConfigError(f"agent/words/{f.name}: {name} must be a list of quoted words")
            lists[name] += [(lang, " ".join(w.lower().split())) for w in words if w.strip()]

    def compiled(*names: str) -> re.Pattern[str]:
        return re.compile(_pattern([w for n in names for w in lists[n]]), re.I)

    charge, period = _pattern(lists["charge"]), _pattern(lists["period"])
    return _Words(
        refund=compiled("refund"),
        total=re.compile(rf"(?:{charge}).*(?:{period})|{_pattern(lists['per_month'])}", re.I),
        billing={"monthly": compiled("monthly"), "annual": compiled("annual")},
        per_user_month=compiled("per_user_month"),
    )


def tool_passage(record: CustomerRecord, today: date, lang: str) -> Passage:
    """A CRM record as a passage the answer can quote and cite: one line for the customer, one
    per order (with its age in days on ``today``)."""
    customer = str(record.get("id", ""))
    lines = [_line("Customer", {k: v for k, v in record.items() if k != "orders"}, today)]
    lines += [_line("Order", order, today) for order in record.get("orders", [])]
    title = say(lang, "crm_record", customer=customer)
    return Passage(
        doc_id=f"crm/customer/{customer}",
        chunk_id=f"crm/customer/{customer}",
        parent_id="",
        title=title,
        breadcrumbs=title,
        text="\n".join(lines),
        source="crm",
        link="",
        anchor="",
        page=None,
        updated=today.isoformat(),
        owner="",
        lang="en",
        score=1.0,
        tool=ToolRecord(TOOL, record, today),
    )


def _line(kind: str, fields: dict[str, Any], today: date) -> str:
    """One record as a line a reader can follow: "Order ORD-7: customer id 4471, order date
    2026-09-15 (80 days ago), …" — its own id after its kind, field names as words."""
    own = next((k for k in ("id", f"{kind.lower()}_id") if k in fields), None)
    head = f"{kind} {fields[own]}" if own else kind
    rest = ", ".join(
        f"{k.replace('_', ' ')} {_value(v, today)}" for k, v in fields.items() if k != own
    )
    return f"{head}: {rest}" if rest else head


def _value(v: object, today: date) -> str:
    """Dates get their age in days: "can they still get a refund" turns on it."""
    if isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
        days = (today - date.fromisoformat(v)).days
        return f"{v} ({days} days ago)" if days >= 0 else v
    return str(v)


@dataclass
class Conclusion:
    text: str
    sources: list[int]  # indices of the passages it rests on (the tool passage first)
    quotes: list[tuple[int, str]]  # the units quoted with it: (passage, text)


def latest_order(record: CustomerRecord) -> dict[str, Any] | None:
    """The customer's order the question is about when it names none: the newest."""
    orders = [o for o in record.get("orders", []) if o.get("order_date")]
    return max(orders, key=lambda o: str(o["order_date"])) if orders else None


def _rule_units(passages: Sequence[Passage]) -> list[tuple[int, Unit]]:
    out = []
    for i, p in enumerate(passages):
        if p.tool:
            continue
        out += [(i, u) for u in units_of(p, i) if u.quotable]
    return out


def _window(order: dict[str, Any], rules: list[tuple[int, Unit]]) -> tuple[int, Unit, float] | None:
    """The rule "within N days" for the order's billing: (passage, unit, N)."""
    billing = str(order.get("billing", "")).lower()
    pattern = _words().billing.get(billing)
    best = None
    for i, u in rules:
        found = [
            r
            for r in ranges(u.text)
            if r.measure == "day" and r.high != float("inf") and r.low == float("-inf")
        ]
        if not found or not re.search(r"\border\b|замовлен|заказ|订单", u.text, re.I):
            continue
        if pattern is not None and not (pattern.search(u.text) or pattern.search(u.label)):
            continue
        if best is None:
            best = (i, u, found[0].high)
    return best


def _price(question: str, rules: list[tuple[int, Unit]]) -> tuple[int, Unit, float] | None:
    """The per-user monthly price of the plan or add-on the question names: (passage, unit, EUR)."""
    for i, u in rules:
        if not _words().per_user_month.search(u.text) or not u.cells:
            continue
        name = next(iter(u.cells.values()))
        if re.search(rf"\b{re.escape(name)}\b", question, re.I):
            amounts = [q.value for q in quantities(u.text) if q.measure == "eur"]
            if amounts:
                return i, u, amounts[0]
    return None


def conclude(question: str, passages: Sequence[Passage], lang: str) -> list[Conclusion]:
    """What follows from the CRM record (the tool passage) and the rules found, for ``question``."""
    tool = next((i for i, p in enumerate(passages) if p.tool and p.tool.tool == TOOL), None)
    found = passages[tool].tool if tool is not None else None
    if tool is None or found is None:
        return []
    record, today = found.record, found.today
    order = latest_order(record)
    rules = _rule_units(passages)
    out: list[Conclusion] = []
    if order is not None and _words().refund.search(question):
        window = _window(order, rules)
        if window is not None:
            i, unit, days_allowed = window
            age = (today - date.fromisoformat(str(order["order_date"]))).days
            what = f"Order {order.get('order_id', '')} ({order.get('billing', '')}, {order['order_date']})"
            key = "within_window" if age <= days_allowed else "outside_window"
            text = say(lang, key, what=what, days=age, window=int(days_allowed))
            out.append(Conclusion(text, [tool, i], [(i, unit.text)]))
    if _words().total.search(question):
        seats = (order or {}).get("seats")
        price = _price(question, rules)
        if seats and price is not None:
            i, unit, eur = price
            total = seats * eur
            text = say(
                lang,
                "total",
                count=f"{seats} seats",
                price=f"{eur:g} EUR",
                total=f"{total:,.2f}".rstrip("0").rstrip(".") + " EUR",
            )
            out.append(Conclusion(text, [tool, i], [(i, unit.text)]))
    return out
