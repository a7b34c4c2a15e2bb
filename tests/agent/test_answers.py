"""What an offline answer quotes, given the answer model's probabilities: made-up documents, the
model's scores set by hand (the model itself is tested in test_answer_model.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import numpy as np

from agent.answers import Judged, Opinion, cells_of, choose, p_of, vetoed
from agent.offline import OfflineReasoner
from agent.passages import Passage
from agent.reasoning import Sentence
from agent.terms import TermStats
from agent.units import units_of


def passage(body: str, doc: str = "doc", updated: str = "2026-01-01", title: str = "") -> Passage:
    crumbs = title or doc.title()
    return Passage(
        doc_id=doc,
        chunk_id=f"{doc}#1",
        parent_id="",
        title=title or doc.title(),
        breadcrumbs=crumbs,
        text=f"{crumbs}\n\n{body}",
        source=f"{doc}.md",
        link=f"{doc}.md",
        anchor="",
        page=None,
        updated=updated,
        owner="",
        lang="en",
        score=1.0,
    )


def scored(passages: list[Passage], probs: dict[str, float]) -> list[Judged]:
    """Every unit of ``passages``, with the probability ``probs`` gives the unit whose text
    starts with a key (0 for the others), best first."""
    out = []
    for i, p in enumerate(passages):
        for u in units_of(p, i):
            p_u = next((v for k, v in probs.items() if u.text.startswith(k)), 0.0)
            out.append(Judged(u, p_u))
    return sorted(out, key=lambda s: -s.p)


GARDEN = passage(
    "Volunteers meet at the north gate every Saturday at nine.\n"
    "Tools are lent from the shed by the pond.\n"
    "To join the watering rota:\n"
    "- write your name on the board in the shed\n"
    "- pick two evenings a week\n"
    "- collect a key from the warden\n"
    "Children under twelve come with an adult."
)


def test_nothing_is_quoted_when_the_best_unit_is_under_the_cut() -> None:
    ranked = scored([GARDEN], {"Volunteers meet": 0.3})
    assert choose(ranked, answer_at=0.4) == []
    assert [s.unit.text for s in choose(ranked, answer_at=0.25)] == [
        "Volunteers meet at the north gate every Saturday at nine."
    ]


def test_a_sentence_that_introduces_a_list_is_quoted_with_its_items() -> None:
    ranked = scored([GARDEN], {"To join": 0.8, "Children": 0.2})
    assert [s.unit.text for s in choose(ranked, answer_at=0.5)] == [
        "To join the watering rota:",
        "write your name on the board in the shed",
        "pick two evenings a week",
        "collect a key from the warden",
    ]


def test_a_list_whose_items_answer_together_comes_with_its_introduction() -> None:
    ranked = scored([GARDEN], {"write your": 0.7, "pick two": 0.6, "To join": 0.1})
    texts = [s.unit.text for s in choose(ranked, answer_at=0.5)]
    assert texts[0] == "To join the watering rota:" and len(texts) == 4


def test_one_item_that_answers_alone_is_quoted_alone() -> None:
    ranked = scored([GARDEN], {"collect a key": 0.9, "pick two": 0.1})
    assert [s.unit.text for s in choose(ranked, answer_at=0.5)] == ["collect a key from the warden"]


def test_others_more_likely_than_not_to_answer_join_the_best_at_most_three() -> None:
    ranked = scored(
        [GARDEN],
        {"Volunteers": 0.9, "Tools": 0.7, "Children": 0.6, "write": 0.55, "pick": 0.45},
    )
    texts = [s.unit.text for s in choose(ranked, answer_at=0.3)]
    assert len(texts) == 3 and texts[0].startswith("Volunteers")
    assert not any(t.startswith("pick") for t in texts)  # under even odds: left out


KILN = passage(
    "Members book the kiln by the shelf. A firing that cracks is fired again once at no charge. "
    "After that, a member who wants another firing pays the shelf rate."
)


def test_a_sentence_that_points_back_is_quoted_after_the_one_it_points_at() -> None:
    """The model's best unit "After that, …" says nothing of what "that" is: the sentence
    before it comes first, though the model finds it unlikely to answer alone."""
    ranked = scored([KILN], {"After that": 0.8, "A firing": 0.1})
    assert [s.unit.text for s in choose(ranked, answer_at=0.5)] == [
        "A firing that cracks is fired again once at no charge.",
        "After that, a member who wants another firing pays the shelf rate.",
    ]
    ranked = scored([KILN], {"A firing": 0.8})  # "that" inside a sentence points at nothing
    assert [s.unit.text for s in choose(ranked, answer_at=0.5)] == [
        "A firing that cracks is fired again once at no charge."
    ]


def test_a_table_row_gives_each_cell_beside_the_row_name() -> None:
    grid = passage(
        "Tier: Bronze · Seats: 5 · Support: email\nTier: Gold · Seats: 50 · Support: phone"
    )
    row = next(u for u in units_of(grid, 0) if u.kind == "row")
    assert [c.text for c in cells_of(row)] == [
        "Tier: Bronze · Seats: 5",
        "Tier: Bronze · Support: email",
    ]


class FakeModel:
    """The answer model's interface as ``Opinion`` reads it: probabilities by a unit's first
    words (0 for the others), and the cut-offs where it overrules the rules."""

    def __init__(self, probs: dict[str, float], rescue_at: float = 0.6, veto_at: float = 0.2):
        self.probs = probs
        self.spec = SimpleNamespace(rescue_at=rescue_at, veto_at=veto_at)
        self.at: list[float | None] = []  # what each call said it needs exact

    def probabilities(self, question, lang, cands, stats, at=None, only=None) -> np.ndarray:
        self.at.append(at)
        return np.array(
            [next((v for k, v in self.probs.items() if c.text.startswith(k)), 0.0) for c in cands]
        )


def opinion(probs: dict[str, float], **cuts: float) -> Opinion:
    model = FakeModel(probs, **cuts)
    return Opinion("when do volunteers meet?", "en", [GARDEN], model, None)  # type: ignore[arg-type]


def test_the_model_is_asked_exactly_only_where_a_cut_off_in_use_reads() -> None:
    """The probabilities need be exact only from the lowest cut-off the opinion uses, so the
    model may leave unread what cannot reach it (``AnswerModel.probabilities``)."""
    both = FakeModel({}, rescue_at=0.6, veto_at=0.2)
    Opinion("when?", "en", [GARDEN], both, None).rescue()  # type: ignore[arg-type]
    rescue_only = FakeModel({}, rescue_at=0.6, veto_at=0.0)
    Opinion("when?", "en", [GARDEN], rescue_only, None).rescue()  # type: ignore[arg-type]
    assert both.at == [0.2] and rescue_only.at == [0.6]


def test_the_model_answers_what_the_rules_refused_only_from_the_rescue_cut() -> None:
    sure = opinion({"Volunteers meet": 0.8}, rescue_at=0.6).rescue()
    assert [q.text for q in sure] == ["Volunteers meet at the north gate every Saturday at nine."]
    assert sure[0].sources == [0] and sure[0].score == 0.8
    assert opinion({"Volunteers meet": 0.5}, rescue_at=0.6).rescue() == []
    assert opinion({"Volunteers meet": 0.99}, rescue_at=1.0).rescue() == []  # no cut: never


def test_a_rescue_quotes_a_list_with_its_introduction() -> None:
    out = opinion({"To join": 0.9}, rescue_at=0.6).rescue()
    assert [q.text for q in out][:2] == [
        "To join the watering rota:",
        "write your name on the board in the shed",
    ]


def test_a_follow_up_is_not_rescued_with_what_was_said_before() -> None:
    said = "Volunteers meet at the north gate every Saturday at nine."
    out = opinion({"Volunteers meet": 0.9, "Tools": 0.7}, rescue_at=0.6).rescue(said)
    assert [q.text for q in out] == ["Tools are lent from the shed by the pond."]


def test_the_model_refuses_the_rules_answer_only_when_every_quote_is_under_the_veto_cut() -> None:
    tools = Sentence("Tools are lent from the shed by the pond.", [0])
    meet = Sentence("Volunteers meet at the north gate every Saturday at nine.", [0])
    low = opinion({"Volunteers meet": 0.9, "Tools": 0.1}, veto_at=0.2)
    assert low.vetoes([tools])
    assert not low.vetoes([tools, meet])  # one quote the model backs: the answer stands
    assert not opinion({"Tools": 0.1}, veto_at=0.0).vetoes([tools])  # no cut: never


def test_a_quote_no_unit_matches_is_never_vetoed() -> None:
    labelled = Sentence("Contractors: the warden lends keys on request.", [0])
    note = Sentence("An older source says otherwise.", [0], note=True)
    assert not opinion({}, veto_at=0.5).vetoes([labelled, note])


def test_a_quote_matches_the_unit_it_holds_or_that_holds_it() -> None:
    judged = [("pick two evenings a week", 0.7), ("Children under twelve come with an adult.", 0.1)]
    assert p_of("- Pick two evenings a week.", judged) == 0.7
    assert p_of("Children under twelve come", judged) == 0.1
    assert p_of("Dogs stay outside.", judged) is None
    assert vetoed(["Children under twelve come with an adult."], judged, 0.2)
    assert not vetoed(["Children under twelve come with an adult."], judged, 0.1)


def _offline(model: FakeModel) -> OfflineReasoner:
    return OfflineReasoner(lambda: TermStats.from_texts([GARDEN.text]), (), model)  # type: ignore[arg-type]


def _answer(reasoner: OfflineReasoner, question: str) -> list[str]:
    draft = asyncio.run(reasoner.answer(question, [question], [GARDEN], []))
    return [s.text for s in draft.sentences]


def test_the_offline_reasoner_takes_the_models_rescue_where_its_rules_refuse() -> None:
    question = "Is there parking for bicycles?"  # no word of it in the garden's page
    assert _answer(_offline(FakeModel({}, rescue_at=1.0)), question) == []
    rescued = _answer(_offline(FakeModel({"Tools are lent": 0.9}, rescue_at=0.6)), question)
    assert rescued == ["Tools are lent from the shed by the pond."]


def test_the_offline_reasoner_refuses_when_the_model_vetoes_every_quote() -> None:
    question = "When do volunteers meet at the north gate?"
    kept = _answer(_offline(FakeModel({"Volunteers": 0.9}, veto_at=0.2)), question)
    assert kept and kept[0].startswith("Volunteers meet")
    assert _answer(_offline(FakeModel({"Volunteers": 0.1}, veto_at=0.2)), question) == []


def test_a_vetoed_answer_gives_way_to_the_models_own_when_it_is_sure() -> None:
    question = "When do volunteers meet at the north gate?"
    model = FakeModel({"Volunteers": 0.1, "Tools": 0.9}, rescue_at=0.6, veto_at=0.2)
    assert _answer(_offline(model), question) == ["Tools are lent from the shed by the pond."]


def test_the_model_overrules_nothing_in_a_language_its_cut_offs_were_not_set_on() -> None:
    model = FakeModel({"Volunteers meet": 0.9, "Tools": 0.1}, rescue_at=0.6, veto_at=0.2)
    other = Opinion("Wann treffen sich die Freiwilligen?", "de", [GARDEN], model, None)  # type: ignore[arg-type]
    assert other.rescue() == []
    assert not other.vetoes([Sentence("Tools are lent from the shed by the pond.", [0])])


LEAVE = passage(
    "Interns may carry over up to three unused days of leave into the next year.\n"
    "Interns get twelve days of leave each year.",
    doc="leave",
)
DAYS = "How many days of leave do interns get?"


def _leave_answer(probs: dict[str, float], question: str = DAYS) -> list[str]:
    reasoner = OfflineReasoner(
        lambda: TermStats.from_texts([LEAVE.text, GARDEN.text]),
        (),
        FakeModel(probs, rescue_at=1.0, veto_at=0.0),  # type: ignore[arg-type]
    )
    draft = asyncio.run(reasoner.answer(question, [question], [LEAVE], []))
    return [s.text for s in draft.sentences]


def test_a_unit_the_model_finds_far_likelier_leads_the_rules_near_best() -> None:
    # the rules alone (the model sees both alike) put the carry-over first: it says every word
    rules = _leave_answer({"Interns may": 0.1, "Interns get": 0.1})
    assert rules[0].startswith("Interns may carry over")
    assert _leave_answer({"Interns may": 0.1, "Interns get": 0.4})[0].startswith("Interns get")
    # twice as likely is not enough to overrule the rules (``Calibration.model_odds``)
    assert _leave_answer({"Interns may": 0.1, "Interns get": 0.2}) == rules


def test_the_model_reorders_nothing_in_a_language_it_does_not_read() -> None:
    question = "Wie viele Urlaubstage bekommen Praktikanten? days leave interns"
    assert _leave_answer({"Interns may": 0.1, "Interns get": 0.9}, question) == _leave_answer(
        {}, question
    )
