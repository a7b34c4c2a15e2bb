"""Footnote's own words, in the language of the question: one catalogue for the agent and the
adapters ("I don't know", notes, "Sources", the ticket offer, errors). Quoted sentences stay in
the language of their source; only what Footnote says itself is translated.

``say(lang, key, **values)`` looks a message up in the asker's language and falls back to English
for a language or a key the catalogue lacks. ``lang`` is what ``ingest.languages.detect_lang``
gives (en, uk, ru, zh, ja, de, fr, …).
"""

from __future__ import annotations

from ingest.lexicon import lexicon

LANGUAGES = ("en", "uk", "ru", "zh", "ja", "de")

CATALOGUE: dict[str, dict[str, str]] = {
    "dont_know": {
        "en": "I don't know: I searched for {searched} and found nothing that answers it.",
        "uk": "Я не знаю: я шукав {searched} і не знайшов нічого, що на це відповідає.",
        "ru": "Я не знаю: я искал {searched} и не нашёл ничего, что на это отвечает.",
        "zh": "我不知道：我搜索了{searched}，没有找到能回答这个问题的内容。",
        "ja": "わかりません：{searched}を検索しましたが、答えになる内容は見つかりませんでした。",
        "de": "Das weiß ich nicht: Ich habe nach {searched} gesucht und nichts gefunden, was das beantwortet.",
    },
    "closest": {
        "en": "Closest: {documents}.",
        "uk": "Найближче: {documents}.",
        "ru": "Ближе всего: {documents}.",
        "zh": "最接近的文档：{documents}。",
        "ja": "近い文書：{documents}。",
        "de": "Am nächsten: {documents}.",
    },
    "offer_ticket": {
        "en": "Want me to open a ticket?",
        "uk": "Створити запит у службу підтримки?",
        "ru": "Создать заявку в службу поддержки?",
        "zh": "需要我创建一个工单吗？",
        "ja": "チケットを作成しましょうか？",
        "de": "Soll ich ein Ticket anlegen?",
    },
    "tickets_unavailable": {
        "en": "I can't open tickets right now; please try again in a few minutes.",
        "uk": "Зараз я не можу створити запит; спробуйте за кілька хвилин.",
        "ru": "Сейчас я не могу создать заявку; попробуйте через несколько минут.",
        "zh": "我现在无法创建工单，请几分钟后再试。",
        "ja": "現在チケットを作成できません。数分後にもう一度お試しください。",
        "de": "Ich kann gerade keine Tickets anlegen; bitte versuchen Sie es in ein paar Minuten erneut.",
    },
    "found_nothing_on": {
        "en": "I found nothing on: {parts}.",
        "uk": "Я нічого не знайшов про: {parts}.",
        "ru": "Я ничего не нашёл о: {parts}.",
        "zh": "以下内容没有找到：{parts}。",
        "ja": "次の点は見つかりませんでした：{parts}。",
        "de": "Dazu habe ich nichts gefunden: {parts}.",
    },
    "external": {
        "en": "(Some sources are external to the company documents.)",
        "uk": "(Деякі джерела не є документами компанії.)",
        "ru": "(Некоторые источники не являются документами компании.)",
        "zh": "（部分来源不属于公司文档。）",
        "ja": "（一部の出典は社内文書ではありません。）",
        "de": "(Einige Quellen gehören nicht zu den Unternehmensdokumenten.)",
    },
    "conflict": {
        "en": "Note: {old} (updated {old_date}) gives {value}; {new} (updated {new_date}) is newer and applies.",
        "uk": "Примітка: {old} (оновлено {old_date}) вказує {value}; {new} (оновлено {new_date}) новіший і має перевагу.",
        "ru": "Примечание: {old} (обновлено {old_date}) указывает {value}; {new} (обновлено {new_date}) новее и действует.",
        "zh": "注意：{old}（更新于 {old_date}）给出的是 {value}；{new}（更新于 {new_date}）更新，以其为准。",
        "ja": "注：{old}（{old_date} 更新）では {value} ですが、{new}（{new_date} 更新）のほうが新しく、こちらが適用されます。",
        "de": "Hinweis: {old} (aktualisiert {old_date}) nennt {value}; {new} (aktualisiert {new_date}) ist neuer und gilt.",
    },
    "for_audience": {
        "en": "For {audience}:",
        "uk": "Для {audience}:",
        "ru": "Для {audience}:",
        "zh": "对于{audience}：",
        "ja": "{audience}の場合：",
        "de": "Für {audience}:",
    },
    "no_crm_access": {
        "en": "You don't have access to customer records.",
        "uk": "У вас немає доступу до записів про клієнтів.",
        "ru": "У вас нет доступа к записям о клиентах.",
        "zh": "您无权查看客户记录。",
        "ja": "顧客レコードへのアクセス権がありません。",
        "de": "Sie haben keinen Zugriff auf Kundendaten.",
    },
    "no_crm_access_here": {
        "en": "Not everyone here may read customer records; ask me in a direct message.",
        "uk": "Не всі тут можуть бачити записи про клієнтів; напишіть мені в особисті.",
        "ru": "Не все здесь могут видеть записи о клиентах; напишите мне в личные сообщения.",
        "zh": "这里并非每个人都能查看客户记录；请私信问我。",
        "ja": "ここにいる全員が顧客レコードを閲覧できるわけではありません。ダイレクトメッセージで聞いてください。",
        "de": "Nicht alle hier dürfen Kundendaten sehen; fragen Sie mich in einer Direktnachricht.",
    },
    "ticket_proposal": {
        "en": "I can open this ticket for you: {title}. Confirm to file it, or cancel.",
        "uk": "Я можу створити цей запит: {title}. Підтвердьте або скасуйте.",
        "ru": "Я могу создать эту заявку: {title}. Подтвердите или отмените.",
        "zh": "我可以为您创建这个工单：{title}。请确认或取消。",
        "ja": "このチケットを作成できます：{title}。確認するかキャンセルしてください。",
        "de": "Ich kann dieses Ticket für Sie anlegen: {title}. Bestätigen oder abbrechen.",
    },
    "ticket_was": {
        "en": "The ticket filed in this chat is {id}: {title}.",
        "uk": "Запит, створений у цьому чаті: {id}: {title}.",
        "ru": "Заявка, созданная в этом чате: {id}: {title}.",
        "zh": "此对话中创建的工单是 {id}：{title}。",
        "ja": "このチャットで作成したチケットは {id}：{title} です。",
        "de": "Das in diesem Chat angelegte Ticket ist {id}: {title}.",
    },
    "empty_question": {
        "en": "Hi! Ask me anything about the company docs — for example “How many vacation days carry over?”",
        "uk": "Привіт! Запитайте мене про документи компанії — наприклад, «Скільки днів відпустки можна перенести?»",
        "ru": "Привет! Спросите меня о документах компании — например, «Сколько дней отпуска можно перенести?»",
        "zh": "您好！可以问我任何关于公司文档的问题，例如“可以结转多少天年假？”",
        "ja": "こんにちは！社内文書について何でも聞いてください。例：「有給休暇は何日繰り越せますか？」",
        "de": "Hallo! Fragen Sie mich alles zu den Unternehmensdokumenten — zum Beispiel „Wie viele Urlaubstage kann ich übertragen?“",
    },
    "too_long": {
        "en": "That message is too long for me ({n} characters; I read up to {limit}). Please shorten it to the question itself.",
        "uk": "Повідомлення задовге ({n} символів; я читаю до {limit}). Будь ласка, скоротіть його до самого запитання.",
        "ru": "Сообщение слишком длинное ({n} символов; я читаю до {limit}). Пожалуйста, сократите его до самого вопроса.",
        "zh": "这条消息太长了（{n} 个字符；我最多读取 {limit} 个）。请只保留问题本身。",
        "ja": "メッセージが長すぎます（{n} 文字。読めるのは {limit} 文字まで）。質問だけに短くしてください。",
        "de": "Die Nachricht ist zu lang ({n} Zeichen; ich lese bis zu {limit}). Bitte kürzen Sie sie auf die Frage selbst.",
    },
    "something_wrong": {
        "en": "Sorry — something went wrong on my side while answering. Please try again in a moment. (reference {ref})",
        "uk": "Вибачте — під час відповіді в мене щось пішло не так. Спробуйте ще раз за мить. (код {ref})",
        "ru": "Извините — при ответе у меня что-то пошло не так. Попробуйте ещё раз через минуту. (код {ref})",
        "zh": "抱歉，我在回答时出了点问题。请稍后再试。（参考编号 {ref}）",
        "ja": "申し訳ありません。回答中に問題が発生しました。しばらくしてからもう一度お試しください。（参照番号 {ref}）",
        "de": "Entschuldigung — beim Antworten ist bei mir etwas schiefgegangen. Bitte versuchen Sie es gleich noch einmal. (Referenz {ref})",
    },
    "dm_hint": {
        "en": "Some documents only you can read may answer this better — ask me in a direct message.",
        "uk": "Деякі документи, доступні лише вам, можуть відповісти краще — напишіть мені в особисті.",
        "ru": "Некоторые документы, доступные только вам, могут ответить лучше — напишите мне в личные сообщения.",
        "zh": "一些只有您能查看的文档可能回答得更好——请私信问我。",
        "ja": "あなただけが読める文書のほうがよく答えられるかもしれません。ダイレクトメッセージで聞いてください。",
        "de": "Einige Dokumente, die nur Sie lesen dürfen, beantworten das vielleicht besser — fragen Sie mich in einer Direktnachricht.",
    },
    "smalltalk": {
        "en": "Hi! Ask me anything about our documents — policies, releases, customers — and I'll answer with sources. I can also open a ticket for you.",
        "uk": "Привіт! Запитайте мене про наші документи — політики, релізи, клієнтів — і я відповім з джерелами. Я також можу створити запит.",
        "ru": "Привет! Спросите меня о наших документах — политиках, релизах, клиентах — и я отвечу со ссылками на источники. Могу и создать заявку.",
        "zh": "您好！可以问我关于公司文档的任何问题——政策、版本、客户——我会附上来源回答。我也可以为您创建工单。",
        "ja": "こんにちは！社内文書（規程、リリース、顧客）について聞いてください。出典付きでお答えします。チケットの作成もできます。",
        "de": "Hallo! Fragen Sie mich zu unseren Dokumenten — Richtlinien, Releases, Kunden — ich antworte mit Quellen. Ich kann auch ein Ticket anlegen.",
    },
    "stored": {
        "en": "I keep your questions, my answers, the documents I cited and your 👍/👎 for {days} days, to improve answers; an admin can delete yours sooner.",
        "uk": "Я зберігаю ваші запитання, мої відповіді, цитовані документи та ваші 👍/👎 {days} днів, щоб покращувати відповіді; адміністратор може видалити ваші раніше.",
        "ru": "Я храню ваши вопросы, мои ответы, процитированные документы и ваши 👍/👎 {days} дней, чтобы улучшать ответы; администратор может удалить ваши раньше.",
        "zh": "为改进回答，我会将您的问题、我的回答、引用的文档和您的 👍/👎 保存 {days} 天；管理员可以提前删除您的记录。",
        "ja": "回答の改善のため、質問・回答・引用した文書・👍/👎 を {days} 日間保存します。管理者に依頼すれば早めに削除できます。",
        "de": "Ich speichere Ihre Fragen, meine Antworten, die zitierten Dokumente und Ihr 👍/👎 {days} Tage lang, um Antworten zu verbessern; ein Admin kann Ihre früher löschen.",
    },
    "within_window": {
        "en": "{what} was {days} days ago, within the {window}-day window, so it is eligible.",
        "uk": "{what} було {days} днів тому, у межах {window} днів, тож воно відповідає умовам.",
        "ru": "{what} было {days} дней назад, в пределах {window} дней, так что оно подходит.",
        "zh": "{what}发生在 {days} 天前，仍在 {window} 天期限内，因此符合条件。",
        "ja": "{what}は{days}日前で、{window}日以内のため対象です。",
        "de": "{what} war vor {days} Tagen, innerhalb der Frist von {window} Tagen, also ist es berechtigt.",
    },
    "outside_window": {
        "en": "{what} was {days} days ago, outside the {window}-day window, so it is not eligible: the window has passed.",
        "uk": "{what} було {days} днів тому, поза межами {window} днів, тож воно вже не відповідає умовам.",
        "ru": "{what} было {days} дней назад, за пределами {window} дней, так что оно уже не подходит.",
        "zh": "{what}发生在 {days} 天前，已超过 {window} 天期限，因此不再符合条件。",
        "ja": "{what}は{days}日前で、{window}日を過ぎているため対象外です。",
        "de": "{what} war vor {days} Tagen, außerhalb der Frist von {window} Tagen, also ist es nicht mehr berechtigt.",
    },
    "total": {
        "en": "That is {count} × {price} = {total} per month.",
        "uk": "Це {count} × {price} = {total} на місяць.",
        "ru": "Это {count} × {price} = {total} в месяц.",
        "zh": "即 {count} × {price} = 每月 {total}。",
        "ja": "{count} × {price} = 月額 {total} です。",
        "de": "Das sind {count} × {price} = {total} pro Monat.",
    },
    "document_outline": {
        "en": "{title} ({updated}), {count} sections:",
        "uk": "{title} ({updated}), розділів: {count}:",
        "ru": "{title} ({updated}), разделов: {count}:",
        "zh": "{title}（{updated}），共 {count} 节：",
        "ja": "{title}（{updated}）、{count} 節：",
        "de": "{title} ({updated}), {count} Abschnitte:",
    },
    "more_sections": {
        "en": "… and {count} more sections.",
        "uk": "… і ще розділів: {count}.",
        "ru": "… и ещё разделов: {count}.",
        "zh": "……另有 {count} 节。",
        "ja": "…ほか {count} 節。",
        "de": "… und {count} weitere Abschnitte.",
    },
    "crm_record": {
        "en": "CRM record of customer {customer}",
        "uk": "Запис CRM про клієнта {customer}",
        "ru": "Запись CRM о клиенте {customer}",
        "zh": "客户 {customer} 的 CRM 记录",
        "ja": "顧客 {customer} の CRM レコード",
        "de": "CRM-Datensatz von Kunde {customer}",
    },
    "no_customer": {
        "en": "There is no customer {customer} in the CRM.",
        "uk": "У CRM немає клієнта {customer}.",
        "ru": "В CRM нет клиента {customer}.",
        "zh": "CRM 中没有客户 {customer}。",
        "ja": "CRM に顧客 {customer} は存在しません。",
        "de": "Im CRM gibt es keinen Kunden {customer}.",
    },
}


def say(lang: str, key: str, **values: object) -> str:
    """A message in ``lang`` (English where the catalogue has none), with ``values`` filled in."""
    texts = CATALOGUE[key]
    return texts.get(lang, texts["en"]).format(**values)


def audience_name(lang: str, audience: str) -> str:
    """An audience in ``lang`` as ``ingest/words/<lang>.yaml`` names it after "for", else as the
    documents and the directory name it ("interns"): audiences are an open set."""
    return lexicon().named.get((lang, audience), audience)


def quote_list(items: list[str], lang: str) -> str:
    """ "“a”, “b”" in the quotation marks of the language."""
    left, right = {
        "uk": ("«", "»"),
        "ru": ("«", "»"),
        "de": ("„", "“"),
        "zh": ("“", "”"),
        "ja": ("「", "」"),
    }.get(lang, ("“", "”"))
    separator = "、" if lang in ("zh", "ja") else ", "
    return separator.join(f"{left}{item}{right}" for item in items)
