"""What a question asks for, read from its words: the kind of answer, the value it is about,
the extreme it wants."""

from __future__ import annotations

import pytest

from agent.questions import asked_thing, asks, matches_kind, required_terms


@pytest.mark.parametrize(
    "question, kind",
    [
        ("How many vacation days can I carry over?", "number"),
        ("How long do I have to submit expenses?", "duration"),
        ("After I land, how much time do I have to register?", "duration"),  # not "how much"
        ("Wie viel Zeit habe ich für die Anmeldung?", "duration"),
        ("How long does the approval take?", "duration"),
        ("When is the carry-over deadline?", "date"),
        ("Who approves a purchase over 60,000 EUR?", "who"),
        ("Can I take first class on a train?", "yesno"),
        ("Which customer reported the CSV export timeout?", "who"),
        # terse questions: the noun that heads them says the kind
        ("Mileage rate for my own car?", "number"),
        ("Free trial length?", "duration"),
        ("VPN port?", "number"),
        ("Salary payday?", "date"),  # the last noun is the head, not "salary"
        ("Carry-over deadline?", "date"),
        ("Show me the travel policy", "any"),
    ],
)
def test_the_kind_of_answer_asked_for(question, kind):
    assert asks(question).kind == kind


def test_a_terse_duration_noun_is_said_by_the_value_and_a_table_word_stays_a_word():
    assert asks("Free trial length?").kind_noun == "length"
    assert asks("VPN port?").kind_noun == ""  # "Port" is a row's label: it must still match


def test_a_value_and_an_extreme_are_read():
    a = asks("Do I need approval for a 700 EUR claim?")
    assert a.quantity is not None and a.quantity.value == 700
    assert asks("Which city has the highest hotel cap?").extreme == "high"
    assert asks("What is the newest release?").dimension == "version"
    assert asks("Can I fly first class?").extreme is None  # "first class" is not an order


@pytest.mark.parametrize(
    "kind, text, ok",
    [
        ("date", "Salaries are paid on the last working day of each month.", True),
        ("date", "Salaries are paid into the account in PeoplePort.", False),
        ("number", "Reimbursed at 0.30 EUR per km.", True),
        ("number", "Rental cars only when public transport is impractical.", False),
        ("date", "Escalate when a P2 is not resolved within 4 hours of the first response.", True),
        ("who", "Requests above 1,000 EUR are approved by the engaging manager.", True),
        ("who", "The ticket was raised by Jonas Richter.", True),
        ("who", "Summary: CSV export times out for large ticket volumes.", False),
        # a year answers "when" as a date does, in any language; an amount is no year
        ("date", "The lighthouse was first lit in 1832 and rebuilt after the storm.", True),
        ("date", "Маяк впервые зажгли в 1832 году.", True),
        ("date", "灯塔于 1832 年首次点亮。", True),
        ("date", "Most of the mills closed in the 1970s.", True),
        ("date", "Weaving stayed a cottage trade until the 18th century.", True),
        ("date", "Маяк построили в XIX веке.", True),  # a century, in its own words
        ("date", "Маяк збудували в дев'ятнадцятому столітті.", True),
        ("date", "灯塔建于十九世纪。", True),
        ("date", "Claims of up to 1500 EUR are paid by the office.", False),
        ("date", "The ferry covers 2000 km a season.", False),
        ("date", "The guild had 1,832 members.", False),
        # how long: from or until a year or a century
        ("duration", "The mill has ground flour since the 1950s.", True),
        ("duration", "The guild kept its charter well into the nineteenth century.", True),
        ("duration", "The guild had 1,832 members.", False),
        # a role answers "who" however many hold it
        ("who", "Invoices from the docks are approved by the harbour managers.", True),
        # a name in Cyrillic is a name; where a script has no capitals, words cannot tell
        ("who", "Маяк построил инженер Пётр Волков.", True),
        ("who", "Маяк построили из местного камня.", False),
        ("who", "灯塔由工程师王海设计。", True),
    ],
)
def test_a_unit_holds_the_kind_of_answer(kind, text, ok):
    assert matches_kind(kind, text) is ok


def test_a_question_word_is_read_as_a_word_not_inside_another():
    assert asks("На чем основана конституция Виктории?").kind == "any"  # "кто" inside a name
    assert asks("Кому принадлежал маяк?").kind == "who"
    assert asks("Насколько широко известен маяк?").kind == "any"  # to what extent, no count
    assert asks("灯塔几乎被毁了吗？").kind != "number"  # 几乎: almost
    assert asks("Чи можна нехтувати цим правилом?").kind != "who"  # "хто" inside "нехтувати"
    assert asks("Наскільки відомий маяк?").kind == "any"
    # "when" opening a clause before the question word asks no date
    assert asks("When the river floods, what is the lower town called?").kind == "any"
    assert asks("When did the river flood, and why?").kind == "date"


def test_when_inside_a_clause_does_not_ask_for_a_date():
    assert asks("Who books my flights when I travel for a project?").kind == "who"
    assert asks("What happens when my laptop breaks?").kind == "any"
    assert asks("And when does it end?").kind == "date"
    assert asks("By when must I submit my expenses?").kind == "date"


def test_when_inside_a_clause_does_not_ask_for_a_date_in_ukrainian_and_russian_either():
    assert asks("Що робити з ноутбуком, коли зникає світло?").kind == "any"
    assert asks("Что делать, когда пропал интернет?").kind == "any"
    assert asks("Коли відчиняється офіс?").kind == "date"
    assert asks("А когда заканчивается испытательный срок?").kind == "date"


def test_where_to_go_asks_for_a_place():
    assert asks("Куди мені йти під час тривоги?").kind == "where"
    assert asks("Куда идти при пожаре?").kind == "where"
    assert asks("Wohin schicke ich die Rechnung?").kind == "where"


def test_a_japanese_question_with_a_question_word_is_not_yes_or_no():
    assert asks("サーバーのアドレスは何ですか？").kind != "yesno"
    assert asks("在宅勤務は可能ですか？").kind == "yesno"


@pytest.mark.parametrize(
    "text",
    [
        "接待员工至少提前一个工作日登记访客。",  # Han numerals
        "Гостей потрібно зареєструвати за два робочі дні.",
        "Гостей нужно зарегистрировать за один рабочий день.",
        "Gäste werden zwei Arbeitstage vorher angemeldet.",
    ],
)
def test_a_count_written_in_words_holds_a_number_in_every_language(text):
    assert matches_kind("duration", text)
    assert matches_kind("number", text)


@pytest.mark.parametrize(
    "question, thing",
    [
        ("What discount does a reseller get?", "discount"),
        ("How much parking allowance do interns receive?", "allowance"),
        ("How many sick days are there?", "days"),
        ("Who is the fire warden of the Munich office?", "warden"),
        ("What's the refund window for a monthly plan?", "window"),
        # a name or a value answers these, not a noun the answer repeats
        ("Which tool do I use for expenses?", ""),
        ("How many times a year is the audit?", ""),
        ("How much cheaper is the annual plan?", ""),
        ("What happens to unused days?", ""),
        ("What does the add-on cost?", ""),
    ],
)
def test_the_thing_asked_for_is_the_head_of_the_opening_noun_phrase(question, thing):
    assert asked_thing(question) == thing
    assert asks(question).thing == thing


@pytest.mark.parametrize(
    "question, thing",
    [
        # a count's noun is its first plural, or what comes before a verb
        ("How many volunteers joined the rowing club?", "volunteers"),
        ("How many members belong to the rowing club?", "members"),
        ("How many walkers need to sign the form?", "walkers"),
        ("How many rowing boats does the club own?", "boats"),
        (
            "How much rowing budget is left?",
            "budget",
        ),  # "budget" is a verb too: not after "how much"
        # a participle after the noun begins a clause about it
        ("What is the paddle used to steer?", "paddle"),
        ("What are the boats stored in?", "boats"),
        ("What is not included in the club fee?", ""),
        ("What is the preferred hull colour?", "colour"),  # before its noun: no clause
    ],
)
def test_the_thing_asked_for_is_no_verb_of_a_clause_about_it(question, thing):
    assert asked_thing(question) == thing


def test_a_version_question_names_no_thing_the_answer_must_repeat():
    assert asks("What is the newest version?").thing == ""  # "2.3.3" answers it


@pytest.mark.parametrize(
    "text, ok",
    [
        ("You must register within 30 days of arrival.", True),
        ("Register within two weeks of arrival.", True),
        ("Register within a week of arrival.", True),
        ("接待员工至少提前一个工作日登记访客。", True),
        ("至少提前 3 个工作日提交申请。", True),
        ("Passes are collected at the reception on floor 15.", False),  # a number, no time
        ("One of the managers signs the form.", False),  # "one" is no span of time
        ("访客到 15 楼前台接待。", False),  # a floor, not a duration
    ],
)
def test_a_duration_is_a_number_with_a_unit_of_time(text, ok):
    assert matches_kind("duration", text) is ok


@pytest.mark.parametrize(
    "text, ok",
    [
        ("You may carry over up to 10 unused days.", False),  # the verb, not the month
        ("Requests may be declined for a business reason.", False),
        ("Carried-over days must be used by 31 May.", True),
        ("The new plan starts in May.", True),
        ("Reviews take place each March.", True),
        ("The office reopens May 4.", True),
    ],
)
def test_a_month_is_a_date_only_where_it_names_a_month(text, ok):
    assert matches_kind("date", text) is ok


@pytest.mark.parametrize(
    "question, bound",
    [
        ("Up to what amount can I book a hotel without approval?", "upper"),
        ("Until what amount is no quote needed?", "upper"),
        ("From what amount do I need two quotes?", "lower"),
        ("Bis zu welchem Betrag darf ich selbst bestellen?", "upper"),
        ("What amount can I book a hotel for?", None),
    ],
)
def test_a_question_can_ask_where_a_rule_stops_or_starts(question, bound):
    assert asks(question).bound == bound


@pytest.mark.parametrize(
    "question",
    [
        "Is a 400 CHF claim paid for Zorblat trips?",
        "Is a CHF 400 claim paid for Zorblat trips?",
        "Is a claim of 1'200 SEK paid for Zorblat trips?",
        "Is a JPY 9,000 dinner paid for Zorblat trips?",
    ],
)
def test_a_currency_beside_a_number_is_money_not_a_name_an_answer_must_repeat(question):
    """Any ISO 4217 code beside a number is the value's unit, not a name: a rule written "400
    francs" or in a table under "Amount (CHF)" answers it as well as one that writes the code.
    Without a number the capitals stay a name ("my SAR" is a Student Aid Report)."""
    _, names = required_terms(question, "en")
    assert names == {"zorblat"}
    _, names = required_terms("How do I receive my SAR for Zorblat trips?", "en")
    assert names == {"sar", "zorblat"}


def test_the_kind_is_the_questions_own_not_its_situations():
    """A situation told before the question may hold a question word of its own ("When I was
    16 …"); the kind is the one the question says, and a follow-up that says none asks what the
    question it follows asked."""
    situated = "When I was 16 the harbour pilots rescued me. — Can I train as a harbour pilot?"
    assert asks(situated).kind == "yesno"
    assert asks("Who trains the harbour pilots — and where?").kind == "where"
    assert asks("How many rest days do pilots get — And after five seasons?").kind == "number"
