"""How relevance reads a question's words (:mod:`cef.retrieve.relevance`): its content words, and
which of them name a thing, with general English only (no tagger, no domain word list).

A word names a thing when it is the head of a noun phrase or a noun before the head (the phrase
opened by a determiner, a quantifier, a possessive, a preposition or "have" before a bare noun), or a capitalized name or a
code; words before a label word of the knowledge base name an instance of it. Verbs are told by
word order (the clause after an auxiliary ends with its verb, a stranded preposition or a particle
follows one) and by inflection. Numbers, calendar and time words, pro-forms and classifier nouns
are no content words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cef.extract.lemmas import default_lemmatizer, known_word
from cef.retrieve.english import CALENDAR as _CALENDAR
from cef.retrieve.english import CLASSIFIERS as _CLASSIFIERS
from cef.retrieve.english import HAVE, MODALS
from cef.retrieve.english import OPENERS as _OPENERS
from cef.retrieve.english import PRO_FORMS as _PRO_FORMS
from cef.retrieve.english import adverb as _plain_adverb
from cef.retrieve.english import inflected_verb as _inflected_verb
from cef.retrieve.pathwords import PREPOSITIONS
from cef.text import QUERY_STOP_WORDS, stem

__all__ = ["Term", "read_terms"]

#: English adjective endings: a word with one before the head of a noun phrase describes it
_ADJECTIVE_ENDINGS = ("al", "ive", "ous", "ful", "less", "able", "ible", "ic", "ary")
#: English noun endings: a word with one names a thing wherever it stands
_NOUN_ENDINGS = ("ction", "ation", "ssion", "ness", "ity", "ship")
#: English verb particles: the word before one is a phrasal verb ("make up", "find out")
_PARTICLES = frozenset(["up", "out", "off", "down", "away"])
#: auxiliaries and modals: in a question, the clause after one ends with its main verb
_AUXILIARIES = MODALS | {"shall"}
#: English articles and possessive and demonstrative determiners: a word right before one is no noun
_DETERMINERS = frozenset(
    ["the", "a", "an", "his", "her", "their", "its", "our", "my", "your", "this", "these", "those"]
)
#: the interrogative determiners ("*which* team", "*what* drug class")
_WH_DETERMINERS = frozenset(["what", "which", "whose"])
#: subordinating conjunctions that open a clause after a verb ("what happens *when*")
_CONJUNCTIONS = frozenset(["when", "if", "while", "where", "whenever", "because", "after", "before"])
#: English subordinating conjunctions: they join clauses, they name nothing and ask nothing
_NO_CONTENT_CONJUNCTIONS = frozenset(["if", "whether", "unless", "because", "although", "though", "while"])
#: the prepositions that open English complex prepositions ("in charge of", "on behalf of", "by means of")
_COMPLEX_FIRST = frozenset(["in", "on", "at", "by"])
#: English plurals not formed from their singular, which the dictionary lemmatizer keeps as they are
_SUPPLETIVE = {"people": "person"}
#: the forms of "be" before a passive participle ("should he *be put* on", "has it *been moved* to")
_BE = frozenset(["be", "been", "being"])
_TOKEN = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)


@dataclass
class Term:
    """A content word of the question: its match key, its form in the question, whether it names a
    thing (in a noun phrase, or a capitalized name or a code), and once weighed, how many records of
    the knowledge base hold it (``df``, up to twice ``df_cap``; 0: none) and its weight."""

    key: str
    form: str
    lemma: str
    names_thing: bool
    instance: bool = False  # it names an instance of a label ("the *loyalty* service"): a node
    proper: bool = False  # capitalized inside the question or holding a digit: a name or a code
    df: int | None = None
    weight: float = 1.0

    @property
    def absent_thing(self) -> bool:
        """A thing the question names that the knowledge base holds nowhere."""
        return self.df == 0 and self.names_thing


def adverb(low: str) -> bool:
    """An English adverb: one :func:`~cef.retrieve.english.adverb` knows ("physically",
    "together"), or a word in -ly on a base of four letters or more that the lemmatizer's
    dictionary holds ("*safely*": safe, "*happily*": happy; not "family", "supply", "apply"). It
    says how; it names no thing."""
    if _plain_adverb(low):
        return True
    if len(low) < 6 or not low.endswith("ly"):
        return False
    base = low[:-2]
    return known_word(base) or (base.endswith("i") and known_word(base[:-1] + "y"))


def _frame_verbs(tokens: Sequence[tuple[str, str, bool, bool]]) -> set[int]:
    """Verbs told by the word before them, in general English: a lower-case content word after an
    adverb ("can someone on warfarin *safely take* Advil": an adverb before a word modifies a verb
    or an adjective, neither names a thing; not after a determiner, a preposition or a possessive:
    "the *weekly* report" describes a thing), and a lower-case word after "be" / "been" / "being"
    before a preposition, a particle or the question's end (a passive participle: "should he *be
    put* on anticoagulation", "are they *being covered*?")."""
    out: set[int] = set()
    n = len(tokens)
    for i in range(1, n):
        raw, _, _, content = tokens[i]
        if not content or not raw.islower():
            continue
        before = tokens[i - 1]
        opens = i >= 2 and (tokens[i - 2][1] in _OPENERS or tokens[i - 2][2])  # "the *weekly* report"
        after_adverb = before[3] and before[0].islower() and adverb(before[1]) and not opens
        ends = i + 1 == n or tokens[i + 1][1] in PREPOSITIONS or tokens[i + 1][1] in _PARTICLES
        if after_adverb or (before[1] in _BE and ends):
            out.add(i)
    return out


def _have_object(tokens: Sequence[tuple[str, str, bool, bool]], i: int) -> bool:
    """ "has" / "have" / "had" before a bare noun: its object ("which patients *have asthma*", "does
    the pier have *lights*"), not a perfect tense ("has *moved*", "have *been*": a participle, or a
    word before a determiner: "who has *left* the team"), nor an auxiliary opening the question ("*has*
    John taken")."""
    if i == 0 or tokens[i][1] not in HAVE or i + 1 >= len(tokens) or not tokens[i + 1][3]:
        return False
    if i + 2 < len(tokens) and tokens[i + 2][1] in _DETERMINERS:
        return False
    low = tokens[i + 1][1]
    lemmas = default_lemmatizer()(low)
    lemma = lemmas[0][1] if len(lemmas) == 1 else low
    return not _inflected_verb(low, lemma) and not adverb(low)


def _to_object(tokens: Sequence[tuple[str, str, bool, bool]], i: int) -> bool:
    """ "to" before a noun ("allergic to *penicillin*"), not before a verb and its object ("to
    *promote* his venture", "safe to *take* warfarin", "have to *stop* taking": a lower-case word
    followed by another content word)."""
    if tokens[i][1] != "to" or i + 1 >= len(tokens) or not tokens[i + 1][3]:
        return False
    if _infinitive(tokens, i):
        return False
    return i + 2 >= len(tokens) or tokens[i + 2][1] not in _OPENERS


def _infinitive(tokens: Sequence[tuple[str, str, bool, bool]], i: int) -> bool:
    """ "to" before a lower-case word and another content word: a verb and its object ("safe to
    *take* warfarin", "the best way to *cook* risotto")."""
    n = len(tokens)
    return (
        tokens[i][1] == "to"
        and i + 2 < n
        and tokens[i + 1][3]
        and tokens[i + 2][3]
        and tokens[i + 1][0].islower()
    )


def _verb_positions(tokens: Sequence[tuple[str, str, bool, bool]]) -> set[int]:
    """Where the question's verbs stand by its word order, in general English: the last content
    word of the clause after an auxiliary ("what did the town council *decide*", "which database
    does the wishlist service *store* its data in") and, in such a question, a last word that
    follows another content word ("what do the dancers in the photo *represent*"), a word between "what" / "which" and a
    determiner, a preposition or a conjunction ("what *happens* when", "what *causes* the"), and the
    lower-case word after a wh-phrase's noun before a determiner, a preposition or another content
    word ("which words *describe* Alps", "which team *owns* the service")."""
    out: set[int] = set()
    n = len(tokens)
    for i, (_, low, _, _) in enumerate(tokens):
        if low in _AUXILIARIES:
            j = i + 1
            while j < n and j <= i + 2 and not tokens[j][3] and tokens[j][1] not in PREPOSITIONS:
                j += 1  # the subject's determiner or pronoun
            last = None
            while j < n and tokens[j][3]:
                last = j
                j += 1
            if last is not None:
                out.add(last)
            if n >= 2 and tokens[-1][3] and tokens[-2][3]:  # "... in the photo *represent*?"
                out.add(n - 1)
            if n >= 2 and tokens[-1][1] in _OPENERS and tokens[-2][3]:  # a stranded preposition: "*rely* on?"
                out.add(n - 2)
        elif (
            low in _WH_DETERMINERS
            and i + 3 < n
            and tokens[i + 1][1] in _CLASSIFIERS
            and tokens[i + 2][1] == "of"
        ):
            # "what kind of specialist *looks* after": the classifier's noun is the wh-phrase's
            noun_verb = tokens[i + 3][3] and i + 5 < n and tokens[i + 4][3] and tokens[i + 4][0].islower()
            if noun_verb and (tokens[i + 5][1] in _OPENERS or tokens[i + 5][3]):
                out.add(i + 4)
        elif low in _WH_DETERMINERS and i + 1 < n and tokens[i + 1][3]:
            after = tokens[i + 2][1] if i + 2 < n else ""
            # "what *happens* to the INR" (not "which drug to take": an infinitive follows a noun)
            to_object = after == "to" and i + 3 < n and not (tokens[i + 3][3] and tokens[i + 3][0].islower())
            if after in _OPENERS or after in _CONJUNCTIONS or to_object:
                out.add(i + 1)
            elif (
                i + 3 < n
                and tokens[i + 2][3]
                and tokens[i + 2][0].islower()
                and (tokens[i + 3][1] in _OPENERS or tokens[i + 3][3])
            ):
                # the wh-phrase is the subject and its verb follows its noun: "which words *describe*
                # Alps", "which team *owns* the", "which drugs *interact* with" (a noun compound ends
                # before a copula or an auxiliary: "which drug class is")
                out.add(i + 2)
    for i in range(n - 1):
        if tokens[i][3] and tokens[i + 1][1] in _PARTICLES:  # a phrasal verb: "which units *make* up"
            out.add(i)
    return out


def read_terms(question: str, heads: set[str], phrase_words: int) -> dict[str, Term]:
    """The question's content words, each marked when it names a thing: it is in a noun phrase
    (up to ``phrase_words`` content words after a determiner, a possessive or a preposition; the
    phrase ends at a label word of the knowledge base, its head, or at a verb), or it is
    capitalized inside the question, or it holds a digit (a code). The words of a phrase before a
    label word name an instance of that label ("the *loyalty points* service"): a node must hold them. Numbers and calendar words are
    left out: they say when, and the temporal filters read them."""
    lemmatize = default_lemmatizer()
    tokens: list[tuple[str, str, bool, bool]] = []  # (word as written, lower case, possessive, content)
    for m in _TOKEN.finditer(question):
        raw = m.group(0)
        possessive = raw.lower().endswith(("'s", "’s"))
        if possessive:
            raw = raw[:-2]
        low = raw.lower().replace("’", "'")
        content = bool(low) and not (
            low in QUERY_STOP_WORDS
            or low in _PRO_FORMS
            or low in _CLASSIFIERS
            or low in _OPENERS
            or low in _CALENDAR
            or low in _NO_CONTENT_CONJUNCTIONS
            or low in _PARTICLES
            or not any(c.isalpha() for c in low)
        )
        tokens.append((raw, low, possessive, content))
    infinitives = {i + 1 for i in range(len(tokens)) if _infinitive(tokens, i)}
    verbs = _verb_positions(tokens) | infinitives | _frame_verbs(tokens)
    out: dict[str, Term] = {}
    things: set[str] = set()  # keys with an occurrence that names a thing
    phrase: list[tuple[Term, bool]] = []  # the open noun phrase: (word, capitalized or a code)

    def close() -> None:
        """The head of a noun phrase is its last word and names a thing; so does a noun before it
        ("the *seabird* monitoring project"), not an adjective that only describes the head ("a
        *negative* experience": the experience is the thing asked about)."""
        for n, (term, name) in enumerate(phrase):
            if n == len(phrase) - 1 or name or term.instance or not term.form.endswith(_ADJECTIVE_ENDINGS):
                things.add(term.key)
        phrase.clear()

    room = 0  # content words the open noun phrase may still take
    for i, (raw, low, possessive, content) in enumerate(tokens):
        if not content:
            close()
            opens = low in _OPENERS or possessive or _to_object(tokens, i) or _have_object(tokens, i)
            room = phrase_words if opens else 0
            continue
        pairs = lemmatize(low)
        lemma = _SUPPLETIVE.get(low) or (pairs[0][1] if len(pairs) == 1 else low)
        key = stem(lemma)
        # a word with a noun ending is no verb by its position ("fees per card *transaction*")
        verb = (i in verbs and not low.endswith(_NOUN_ENDINGS)) or _inflected_verb(low, lemma)
        # a participle inside a phrase, before another content word, modifies it ("a punctured tyre")
        modifier = verb and room > 0 and i + 1 < len(tokens) and tokens[i + 1][3]
        name = i > 0 and (raw[:1].isupper() or any(c.isdigit() for c in raw))
        # a bare noun in a complex preposition ("in charge of", "on top of") names no thing
        idiom = 0 < i < len(tokens) - 1 and tokens[i - 1][1] in _COMPLEX_FIRST and tokens[i + 1][1] == "of"
        term = out.get(key)
        if term is None:
            term = out[key] = Term(key, low, lemma, False)
        if not name and adverb(low):  # "on warfarin *safely* take": it says how, the phrase goes on
            continue
        if name:
            things.add(key)
            term.proper = True
        if room > 0 and not verb and not idiom:
            phrase.append((term, name))
            if key in heads:  # "the loyalty points service": the words before it name a service
                for before, _ in phrase[:-1]:
                    before.instance = True
        elif not modifier:
            close()
        room = 0 if (verb and not modifier) or key in heads else max(room - 1, 1 if modifier else 0)
        if room == 0:
            close()
        if i in infinitives:  # its object names a thing: "to cook *risotto*"
            room = phrase_words
        if possessive:
            close()
            room = phrase_words
    close()
    for term in out.values():
        term.names_thing = term.key in things
    return out
