"""General English closed classes the question readers share (:mod:`~cef.retrieve.questionterms`,
:mod:`~cef.retrieve.pathcues`, :mod:`~cef.retrieve.pathtypes`): determiners and prepositions that open a
noun phrase, calendar and time words, pro-forms, classifier nouns, and how an inflected verb looks. A
leaf module (it imports nothing of cef), so the readers can share it without importing each other."""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence

__all__ = [
    "ABBREVIATIONS",
    "ANSWER_KINDS",
    "ASKED_KIND",
    "CALENDAR",
    "CLASSIFIERS",
    "CLASSIFIER_NOUNS",
    "COPULAS",
    "GREETINGS",
    "HAVE",
    "MEASURES",
    "MEASURE_NOUNS",
    "MEASURE_SHOWN",
    "MODALS",
    "MONEY",
    "MONEY_WORDS",
    "OPENERS",
    "PRO_FORMS",
    "QUANTITY",
    "YEAR",
    "adverb",
    "count_of",
    "dates_in",
    "inflected_verb",
    "name_shown",
    "same_date",
    "word_forms",
]

#: the forms of "be" a question or a description uses ("what *is* the genre", "*is* a member of")
COPULAS = frozenset(["is", "are", "was", "were", "be", "been"])
#: the forms of "have" ("which teams *have* owned", "a service *has* ...")
HAVE = frozenset(["has", "have", "had"])
#: "do" and the modal verbs: in a question, the clause after one ends with its main verb
MODALS = frozenset(["do", "does", "did", "can", "could", "will", "would", "should", "may", "might", "must"])
#: words that open a noun phrase in general English: articles, possessive and demonstrative
#: determiners, quantifiers, the interrogative determiners, and prepositions (their object; not
#: "to", which opens infinitives as often: "to *promote* his venture")
OPENERS = frozenset(
    ["the", "a", "an", "our", "my", "your", "his", "her", "its", "their", "this", "these", "those",
     "which", "what", "whose", "each", "every", "any", "some", "all", "no",
     "many", "much", "few", "several", "more", "most", "enough",
     "of", "by", "in", "on", "at", "for", "with", "from", "per", "about", "after", "before", "during",
     "into", "over", "under", "between", "without", "within", "through", "across", "along", "among",
     "around", "behind", "below", "beneath", "beside", "beyond", "inside", "near", "onto", "outside",
     "since", "until", "upon", "via", "toward", "towards", "against", "like", "unlike", "than"]
)  # fmt: skip
#: calendar and time words (months, weekdays, seasons, time adverbs): when a question asks, not
#: what it is about
CALENDAR = frozenset(
    [m.lower() for m in calendar.month_name if m]
    + [d.lower() for d in calendar.day_name]
    + ["spring", "summer", "autumn", "winter"]
    # English time adverbs and the nouns of time idioms ("these days", "at the moment", "at the
    # start of", "back in"): when the question asks, which the temporal filters read
    + ["today", "tonight", "yesterday", "tomorrow", "moment", "day", "days", "nowadays", "lately",
       "recently", "currently", "current", "presently", "start", "beginning", "end", "back", "ago",
       "ever", "anymore", "formerly", "previously", "once", "since",
       # adverbs of frequency and the time ordinals ("how *often*", "the *last* result"): when, not what
       "often", "usually", "always", "never", "sometimes", "still", "last", "latest", "next", "previous"]
)  # fmt: skip
#: English pro-forms: "one(s)" and the indefinite pronouns stand for a thing, they name none
PRO_FORMS = frozenset(
    ["one", "ones", "someone", "anyone", "everyone", "somebody", "anybody", "everybody", "nobody",
     "something", "anything", "everything", "nothing", "whoever", "whomever", "whatever", "whichever"]
)  # fmt: skip
#: English classifier nouns: "what *kind* / *type* / *sort* of X" asks for a category of X (a closed
#: class of general English, no relation's name: the relation is found by how widely its values are
#: shared, :meth:`PathTypes._sharing`)
CLASSIFIER_NOUNS = frozenset(["kind", "type", "sort", "category", "class", "variety"])
#: English classifier nouns and their plurals ("what *kind* of film", "what *types* are"): they ask
#: for a category, they name no thing
CLASSIFIERS = CLASSIFIER_NOUNS | frozenset(
    w[:-1] + "ies" if w.endswith("y") else w + ("es" if w.endswith("s") else "s") for w in CLASSIFIER_NOUNS
)


def inflected_verb(token: str, lemma: str) -> bool:
    """A past or progressive form ("blamed", "hosting") or an irregular one ("went" -> "go"): a verb
    (a plural noun's lemma is the token less its plural ending)."""
    if (len(token) > 4 and token.endswith("ed")) or (len(token) > 5 and token.endswith("ing")):
        return True
    if lemma == token or token in (lemma + "s", lemma + "es") or token == lemma[:-1] + "ies":
        return False
    if token.endswith("t") and not lemma.endswith("t"):
        return True  # a past form in -t ("sent" -> "send", "built", "kept"): no plural ends so
    return not token.startswith(lemma[:3])  # an irregular form, not a spelling variant


#: English general nouns a question uses for the kind of answer it wants ("what *year* did",
#: "the *person* who", "what is the *job* of"): they say what is asked, they name no thing that a
#: knowledge base must hold (its text says "in 2019", "an oceanographer")
ANSWER_KINDS = frozenset(
    ["person", "people", "thing", "place", "year", "date", "time", "month", "week", "job", "occupation",
     "profession"]
)  # fmt: skip
#: English abbreviations of titles and ranks before a name ("*Dr.* Amara Lind" is a doctor)
ABBREVIATIONS = {
    "dr": "doctor", "prof": "professor", "capt": "captain", "sgt": "sergeant", "lt": "lieutenant",
    "col": "colonel", "gen": "general", "gov": "governor", "sen": "senator", "supt": "superintendent",
    "insp": "inspector", "rev": "reverend",
}  # fmt: skip
#: the English adjective endings an adverb in -ly is built on ("physic*al*ly", "obv*ious*ly")
_ADVERB_BASES = ("al", "ous", "ive", "ful", "less", "ent", "ant", "ic", "ible", "able")


#: English adverbs not built with -ly ("take them *together*"): they say how, they name no thing
_PLAIN_ADVERBS = frozenset(
    ["together", "apart", "alone", "instead", "again", "anyway", "almost", "already", "also", "else", "even",
     "just", "maybe", "perhaps", "quite", "rather", "soon", "too", "very", "well", "yet"]
)  # fmt: skip


def adverb(token: str) -> bool:
    """An English adverb built on an adjective ("physically", "obviously", "frequently",
    "possibly") or a plain one ("together"): it says how, it names no thing."""
    if token in _PLAIN_ADVERBS:
        return True
    if len(token) < 6 or not token.endswith("ly"):
        return False
    base = token[:-2]
    return base.endswith(_ADVERB_BASES) or token.endswith(("ably", "ibly"))


#: English derivational suffixes of agent and result nouns and of adjectives: "supervisor" is held
#: where the text says "supervises", "foggy" where it says "fog"
_DERIVATIONAL = ("ors", "ers", "or", "er", "ist", "ions", "ion", "ments", "ment", "gy", "y")
#: the inflections tried on a derived word's base ("supervis": supervise, supervises, supervised)
_INFLECTIONS = ("", "e", "s", "es", "ed", "ing")
_VOWELS = "aeiou"


def word_forms(word: str, lemma: str) -> list[str]:
    """Other forms of a word, by regular English morphology: the inflections of its lemma ("stop":
    stops, stopped, stopping; "take": takes, taking; "carry": carries, carried) and, for a word of 5
    letters or more with a derivational suffix, its base inflected ("supervisor": supervise,
    supervises; "foggy": fog). The word and its lemma themselves are left out."""
    # "take": taking; not "programme": programming (a doubled consonant before the "e" stays)
    bare = lemma[:-1] if lemma.endswith("e") and lemma[-2:-1] != lemma[-3:-2] else lemma
    plural = lemma + ("es" if lemma.endswith(("s", "x", "z", "ch", "sh")) else "s")
    forms = [plural, bare + "ed", bare + "ing"]
    if len(lemma) in (3, 4) and lemma[-1] not in _VOWELS + "wxy" and lemma[-2] in _VOWELS:
        forms += [lemma + lemma[-1] + "ed", lemma + lemma[-1] + "ing"]  # "stopped", "planning"
    if lemma.endswith("y") and len(lemma) > 2 and lemma[-2] not in _VOWELS:
        forms += [lemma[:-1] + "ies", lemma[:-1] + "ied"]
    suffix = next((s for s in _DERIVATIONAL if word.endswith(s)), None) if len(word) >= 5 else None
    if suffix is not None:
        base = word[: -len(suffix)]
        if base.endswith(base[-1] * 2):  # "foggy": fog
            base = base[:-1]
        forms += [base + ending for ending in _INFLECTIONS]
    return [f for f in dict.fromkeys(forms) if len(f) >= 3 and f not in (word, lemma)]


#: where a noun says the kind of answer asked: after "what" / "which" ("what *year*", "what is the
#: *job* of"), possessed at the question's end ("what is Hanna's *job*") or before a relative pronoun
#: ("the *person* who"), not "each year", "per month"
ASKED_KIND = re.compile(
    # "what is Hanna Voss's *job*": the possessed noun ending the question
    r"\bwhat(?:['’]s|\s+is|\s+was)\s+(?:[\w.'’-]+\s+){0,3}?[\w-]+['’]s\s+(\w+)\W*$"
    r"|\b(?:what|which)(?:\s+(?:is|was|are|were)\s+the|['’]s\s+the)?\s+(\w+)|\b(\w+)\s+(?:who|whom|that|where)\b",
    re.I,
)
#: English adjectives of dimension and age: "how *tall* is", "how *long* is" ask for a quantity
MEASURES = frozenset(
    ["tall", "long", "old", "big", "far", "high", "deep", "wide", "heavy", "large", "thick", "young"]
)
#: a year in a text ("in 2019"): what "what *year*" asks a result to show
YEAR = re.compile(r"(?<![\w-])(?:1[0-9]|20)\d\d(?![\w])")
#: a quantity in a text, not a year nor a part of a code or a date ("30 metres", "four kilometres")
QUANTITY = re.compile(
    r"(?<![\w.-])(?!(?:1[0-9]|20)\d\d\b)\d+(?:[.,]\d+)?(?![\d-])|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|fifteen|twenty|thirty|forty|fifty|hundred|thousand|dozen|half)\b",
    re.I,
)

_NUMBER = (
    r"(?:(?<![\w.-])\d+(?:[.,]\d+)?(?:\s*|-)|\b(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|fifteen|twenty|thirty|forty|fifty|hundred|thousand|dozen|half|several|few)(?:\s+|-))"
)
_LENGTH = (
    r"(?:mm|cm|m|km|mi|ft|millimet(?:re|er)s?|centimet(?:re|er)s?|met(?:re|er)s?|kilomet(?:re|er)s?|feet|foot|"
    r"inch(?:es)?|miles?|yards?|storeys?|stories|floors)"
)
_DURATION = r"(?:ms|s|sec|secs|min|mins|h|hrs?|seconds?|minutes?|hours?|days?|weeks?|months?|years?|decades?)"
_MASS = r"(?:mg|g|kg|t|lbs?|oz|grams?|kilo(?:gram)?s?|tonnes?|tons?|pounds?|ounces?)"


def _with_unit(units: str) -> re.Pattern[str]:
    return re.compile(rf"{_NUMBER}{units}\b", re.I)


_AGE = re.compile(
    rf"{_NUMBER}{_DURATION}[\s-]+old\b|\baged?\s+\d+|\b(?:born|built|founded|established|opened|"
    r"launched)\s+(?:in\s+)?(?:1[0-9]|20)\d\d\b",
    re.I,
)
#: what "how *tall* / *long* / *old* is" asks a result to show: a quantity in a unit of that dimension
#: ("240 m", "four kilometres", "15 minutes", "62 years old", "built in 1871"; "how *big* is": any
#: quantity). General English units, not a domain's.
MEASURE_SHOWN: dict[str, re.Pattern[str]] = {
    **dict.fromkeys(["tall", "high", "deep", "wide", "thick"], _with_unit(_LENGTH)),
    **dict.fromkeys(["long", "far"], _with_unit(f"(?:{_LENGTH}|{_DURATION})")),
    "heavy": _with_unit(_MASS),
    **dict.fromkeys(["old", "young"], _AGE),
    **dict.fromkeys(["big", "large"], QUANTITY),
}

#: the nouns that name each dimension as a property ("how *old* is Lucas": his ``age``; "how *tall*":
#: a ``height``): a named thing that has such a property holds the measure asked of it
MEASURE_NOUNS: dict[str, frozenset[str]] = {
    **dict.fromkeys(["old", "young"], frozenset(["age", "born", "birth", "birthday", "built", "founded"])),
    **dict.fromkeys(["tall", "high"], frozenset(["height", "elevation", "altitude"])),
    "long": frozenset(["length", "duration"]),
    "far": frozenset(["distance"]),
    "deep": frozenset(["depth"]),
    "wide": frozenset(["width"]),
    "thick": frozenset(["thickness"]),
    "heavy": frozenset(["weight", "mass"]),
    **dict.fromkeys(["big", "large"], frozenset(["size", "area", "capacity"])),
    "much": frozenset(["cost", "price", "fee", "fees", "amount", "salary", "budget", "revenue", "value"]),
}
#: general English words of money: "how much" with one of them asks for a sum of money ("how much do
#: we *pay*", "how much *revenue* did we lose")
MONEY_WORDS = frozenset(
    [
        "cost",
        "costs",
        "costing",
        "pay",
        "pays",
        "paid",
        "paying",
        "price",
        "prices",
        "priced",
        "spend",
        "spends",
        "spent",
        "spending",
        "charge",
        "charges",
        "charged",
        "fee",
        "fees",
        "revenue",
        "revenues",
        "money",
        "budget",
        "salary",
        "salaries",
        "wage",
        "wages",
        "bill",
        "bills",
        "billed",
        "refund",
        "refunds",
        "refunded",
        "worth",
        "earn",
        "earns",
        "earned",
        "owe",
        "owes",
        "owed",
        "invoice",
        "invoiced",
        "funding",
        "funded",
        "donate",
        "donated",
        "donation",
    ]
)
_CURRENCY = (
    r"(?:dollars?|euros?|pounds?|pence|cents?|yen|yuan|francs?|rupees?|usd|eur|gbp|chf|jpy|cad|aud|bucks)"
)
_SCALE = r"(?:\s?(?:k|m|bn|million|billion|thousand|grand))?"
#: a sum of money in a text: "$1,200", "€3.5m", "40 euros", "twelve thousand dollars", "USD 900"
MONEY = re.compile(
    rf"[$€£¥₹]\s?\d[\d,.]*{_SCALE}|(?<![\w.-])\d[\d,.]*{_SCALE}\s?{_CURRENCY}\b|\b(?:usd|eur|gbp|chf)\s?\d"
    rf"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|hundred|thousand|"
    rf"million|billion)\s+{_CURRENCY}\b",
    re.I,
)

_COUNT = (
    r"(?:(?<![\w.-])\d+(?:[.,]\d+)?\s+|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|forty|fifty|hundred|thousand|dozen|dozens|hundreds|thousands)\s+)"
)


def count_of(stems: list[str]) -> re.Pattern[str]:
    """What "how *many* grey seals" asks a result to show: a number before the counted words (up to
    three words between: "12,000 customers", "three grey seals"), by their stems."""
    words = "|".join(re.escape(s) for s in stems if s)
    return re.compile(rf"{_COUNT}(?:[\w'-]+\s+){{0,3}}(?:{words})", re.I)


_MONTH_NUMBER = {m.lower(): i for i, m in enumerate(calendar.month_name) if m} | {
    m.lower(): i for i, m in enumerate(calendar.month_abbr) if m
}
_DATE_PARTS = re.compile(
    r"(?<![\w-])((?:19|20)\d\d)(?:[-/.](0?[1-9]|1[0-2])(?![\d]))?|\b("
    + "|".join(m for m in _MONTH_NUMBER)
    + r")\b",
    re.I,
)


def dates_in(text: str) -> list[tuple[int | None, int | None]]:
    """The dates a text states, as (year, month), either unknown: "2024-03" (2024, 3), "September
    2024" (2024, 9), "in 2019" (2019, None), "the March meeting" (None, 3). A month name must be
    capitalized ("may" is a verb)."""
    out: list[tuple[int | None, int | None]] = []
    month: int | None = None
    for m in _DATE_PARTS.finditer(text):
        if m.group(3) is not None:
            if m.group(3)[:1].isupper():
                month = _MONTH_NUMBER[m.group(3).lower()]
                out.append((None, month))
            continue
        year, mo = int(m.group(1)), int(m.group(2)) if m.group(2) else None
        if mo is None and out and out[-1] == (None, month) and month is not None:
            out[-1] = (year, month)  # "September 2024"
        else:
            out.append((year, mo))
    return out


def same_date(a: Sequence[tuple[int | None, int | None]], b: Sequence[tuple[int | None, int | None]]) -> bool:
    """Whether two texts' dates (:func:`dates_in`) can name the same time: some pair agrees on each
    part both give; true when either states none."""
    if not a or not b:
        return True
    return any(
        (x[0] is None or y[0] is None or x[0] == y[0]) and (x[1] is None or y[1] is None or x[1] == y[1])
        for x in a
        for y in b
    )


#: capitalized words that are no one's name: the pronoun "I" and its contractions, greetings and
#: interjections that open a clause after a comma
_NO_NAMES = ["I", "I'm", "I’m", "I've", "I’ve", "I'd", "I’d", "I'll", "I’ll", "OK", "Ok", "Okay", "Hey", "Hi",
             "Hello", "Oh", "Wow", "Thanks", "Yes", "No", "Yeah", "Sure", "Cool", "Congrats"]  # fmt: skip


#: words that open an address to the hearer ("*Hi* Melanie!"): the name after one is who is spoken to
GREETINGS = frozenset({"hi", "hey", "hello", "dear", "yo", "thanks", "bye", "morning", "evening"})


def name_shown(exclude: Sequence[str], nouns: Sequence[str] = (), titles: bool = True) -> re.Pattern[str]:
    """What "what is the *name* of X's dog" asks a text to show: a name right after the asked noun
    ("my dog *Oscar*", "*Oscar*, my guinea pig": a capitalized word a few words from it in one
    sentence), one a naming verb gives in a line that says the noun ("a puppy named *Oscar*", "a shop
    called *Threadline*", "this is *Max*! [image: a dog]") or, when a title is asked, a quoted title
    beside it;
    not a capitalized word of ``exclude`` (the question's own names, the speakers'), a month or a
    weekday, "I" or an interjection. Without ``nouns``, any capitalized word inside a sentence (or a
    quoted title, with ``titles``)."""
    words = {w for text in exclude for w in re.findall(r"[A-Z][\w'’-]*", text)}
    words |= {m for m in calendar.month_name if m} | set(calendar.day_name) | set(_NO_NAMES)
    banned = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    # not a name a greeting addresses ("Hey Tam, my store ..."): the hearer, not the name asked
    greeted = "".join(rf"(?<!\b(?i:{g}) )" for g in sorted(GREETINGS))
    # a name may stand in Markdown emphasis ("the survey boat *Petrel*")
    name = rf"{greeted}[*_]?(?-i:(?!(?:{banned})(?![\w'’-]))[A-Z][\w'’-]+)"
    quoted = r"[\"“][^\"”]{3,80}[\"”]"
    if not nouns:
        return re.compile(rf"(?<=[\w,;:)] ){name}" + (rf"|{quoted}" if titles else ""))
    asked = rf"\b(?:{'|'.join(re.escape(n) for n in nouns)})(?:s|es)?\b"
    naming = (
        r"\b(?:named|called|titled|name\s+is|name's|names\s+are|this\s+is|meet)\s+(?:(?:him|her|it|them)\s+)?"
    )
    near = r"[^.!?\n]{0,12}?"
    said = r"[^.!?\n]{0,40}?"
    turn = r"[^\n]{0,120}?"  # a naming verb may name what the turn's next sentence or its photo shows
    titled = rf"|{asked}{said}{quoted}|{quoted}{said}{asked}" if titles else ""
    return re.compile(
        rf"{asked}{near}(?<=[\w,;:)] ){name}|(?<=[\w,;:)–-] ){name}{near}{asked}"
        rf"|{asked}{turn}{naming}[\"“]?{name}|{naming}[\"“]?{name}{turn}{asked}{titled}",
        re.I,
    )
