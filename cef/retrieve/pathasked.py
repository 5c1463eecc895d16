"""What a question asks for, read with general English only (no tagger, no domain words): the noun
a "which" / "what" / "how many" or a request opens (its head: "the plant *manager*"), else what the
question word asks ("who": a person) (:func:`asked_for`); the question's last sentence
(:func:`last_sentence`); and the words a relation's description calls its two ends by
(:func:`described_ends`). :mod:`~cef.retrieve.pathtypes` fits what is asked to the node types a
path ends at."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from cef.extract.lemmas import WORD
from cef.retrieve.english import CLASSIFIER_NOUNS, COPULAS, HAVE, MODALS
from cef.retrieve.pathagent import agent_noun
from cef.retrieve.pathwords import FUNCTION_WORDS, PREPOSITIONS, relation_words
from cef.text import QUESTION_WORDS

__all__ = [
    "AskedFor",
    "asked_for",
    "asks_broad_kind",
    "described_ends",
    "described_modifiers",
    "heads_asked",
    "last_sentence",
]

#: determiners between a question word and the noun it asks about ("what is *the* genre")
_DETERMINERS = frozenset(["the", "a", "an"])
#: words that open a noun phrase: articles and quantifiers ("*all* services", "*every* plant")
_QUANTIFIERS = _DETERMINERS | frozenset(["all", "every", "each", "any", "some", "both"])
#: English prepositions and verb particles (a closed class of general English): no noun phrase holds
#: one bare, so one ends the asked noun ("which doctor looks *after* X": the noun is "doctor")
_PREPOSITIONS = PREPOSITIONS | frozenset(
    ["about", "above", "across", "after", "against", "along", "among", "around", "as", "before",
     "behind", "below", "beneath", "beside", "between", "beyond", "during", "inside", "into", "near",
     "off", "onto", "out", "outside", "over", "past", "since", "through", "toward", "towards", "under",
     "until", "up", "upon", "via", "within", "without"]
)  # fmt: skip
#: what a verb takes after it: an object's determiner, a preposition
_VERB_OBJECTS = _DETERMINERS | _PREPOSITIONS
#: auxiliaries and modals (with the copulas): the word before one ends a question's subject
_AUXILIARIES = HAVE | MODALS
#: words that end a noun phrase in a description: function words, prepositions, conjunctions
_STOPS = FUNCTION_WORDS | _PREPOSITIONS | COPULAS | HAVE | frozenset(["or", "and", "that", "which", "who"])
#: what the question words that name no noun ask for, in general English
#: ("*whose* policies were written by X": the owner or holder of what follows, a person or body; the
#: noun after "whose" is the owned thing, not what is asked)
_WH_ASKS = {"who": "person", "whom": "person", "whose": "person", "where": "place", "when": "date"}
#: question words that ask where or when something is; the noun after their copula is its subject
_PLACE_TIME = frozenset({"where", "when"})
#: how the broad kinds above read when compared with node types by meaning ("place" alone is near
#: any noun; its kinds of general English are not)
_WH_TEXTS = {"place": "a place, location, site, venue or building"}


def described_ends(description: str) -> tuple[list[str], list[str]]:
    """The words a relation's description calls its two ends by, read with general English: the
    head (last word) of each noun phrase an indefinite article opens, up to a function word, a
    preposition or a bracket. The first phrase is the subject's when a form of "be" or "have"
    follows it ("*an artwork* is in the care of ...": artwork; "a staff member leads": a verb may
    end it, so nothing), and so is a phrase after a form of "be" ("a researcher ... is *a member*
    of": member); the first other phrase is the object's ("an exhibition occupies *a gallery
    room* during its run": room; not the words before the head, which may name another thing:
    "a *conservation* treatment"). A possessive inside a phrase names its thing: "*a book's*
    English translation is made by ...": book. Empty lists when the description says neither so."""
    parts = re.findall(r"[^\W_]+(?:['-][^\W_]+)*|[()\[\],;:]", description.lower())
    subject: list[str] = []
    obj: list[str] = []
    first = True
    i = 0
    while i < len(parts) and not obj:
        if parts[i] not in ("a", "an"):
            i += 1
            continue
        j = i + 1
        while j < len(parts) and parts[j][0].isalnum() and parts[j] not in _STOPS:
            j += 1
        head = parts[j - 1 : j] if j > i + 1 else []
        # "a book's English translation": the article's thing is the possessor, the book
        owner = next((w[:-2] for w in parts[i + 1 : j - 1] if w.endswith("'s") and len(w) > 2), None)
        head = [owner] if owner else head
        after = parts[j] if j < len(parts) else ""
        if first:
            subject += head if after in COPULAS | HAVE else []
        elif i > 0 and parts[i - 1] in COPULAS:
            subject += head
        else:
            obj = head
        first = False
        i = j
    return subject, obj


def described_modifiers(description: str, is_head: Callable[[str], bool]) -> list[tuple[str, ...]]:
    """The words before a type's head word in each noun phrase of a relation's description an
    indefinite article opens and the head word ends (``is_head``: whether a word is that head),
    read with general English: "*an animal* patient belongs to an owner": (animal,); "a rota
    shift": (rota,); () for a bare "a veterinarian". Whatever follows the head does not matter (a verb
    may: "belongs"), so a phrase is read wherever its type's head word is."""
    parts = re.findall(r"[^\W_]+(?:['-][^\W_]+)*|[()\[\],;:]", description.lower())
    out: list[tuple[str, ...]] = []
    for i, word in enumerate(parts):
        if word not in ("a", "an"):
            continue
        j = i + 1
        while j < len(parts) and parts[j][0].isalnum() and parts[j] not in _STOPS and not is_head(parts[j]):
            j += 1
        if j < len(parts) and is_head(parts[j]) and "'" not in "".join(parts[i + 1 : j]):
            out.append(tuple(parts[i + 1 : j]))
    return out


@dataclass(frozen=True)
class AskedFor:
    """What kind of thing a question asks for: the words to compare with the ends of its paths
    (``text``), the lemmas of its head word and the head's token position (None: a question word
    alone, "who"); ``classifier``: the head is a classifier noun ("what *kind* of film"), the
    question asks for a category."""

    text: str
    lemmas: frozenset[str]
    at: int | None
    classifier: bool = False
    #: token position of the question word that asks ("*who* supervises"); where, not what, is asked
    wh: int | None = field(default=None, compare=False)


def asks_broad_kind(asked: AskedFor) -> bool:
    """The question word says what is asked ("*who* supervises X", "*who* is covering X": a
    person; "where": a place), a broad kind of general English, not a noun of the question."""
    return asked.at is None or asked.text.split(" ", 1)[0] in _WH_ASKS.values()


def heads_asked(asked: AskedFor, label: str, lemma: Callable[[str], str]) -> bool:
    """The asked noun's head word is the very head word (the last) of the type ``label``'s name:
    the same word or lemma, not only a shared stem ("investigator" heads ``SIUInvestigator``, not
    ``FraudInvestigation``); never for a question word alone or a classifier, which heads many
    types alike."""
    head = relation_words(label)[-1:]
    if asked.at is None or asked.classifier or not head:
        return False
    return head[0] in asked.lemmas or lemma(head[0]) in asked.lemmas


def asked_for(
    tokens: list[tuple[str, str]],
    at: int | None,
    lemma: Callable[[str], str],
    verbs: frozenset[str] = frozenset(),
    others: frozenset[int] = frozenset(),
    types: frozenset[str] = frozenset(),
    start: int = 0,
    possessive: bool = False,
) -> AskedFor | None:
    """The kind of thing the question asks for, read with general English: the noun a "which" /
    "what" / "how many" or a request ("list all ...", "name the ...") opens ("*which vendors*",
    "what bike *models*", "what is the *genre* of", "which of the *plants*"; its head is its last
    word: "the plant *manager*" asks for a manager), else what the question word itself asks for
    ("who" a person, "where" a place, "when" a date; "who is the *manager*": a person who manages).
    None when the question names no kind ("what did X write").

    No tagger tells nouns from verbs, so the noun ends before a later word that is a form of a
    relation's verb (``verbs``: lemmas of the graph's relation words: "which cluster *runs*") or an
    inflected -ed / -ing form ("which team *looked* after", "name the team *owning* X"), and
    right after "which" / "what" a last word followed by what a verb takes (a determiner, a
    preposition, the anchor: "which team *looked* after", "which service *writes* to X") is the
    verb, not the noun (after a copula it is a noun phrase: "who is the plant manager of X").
    ``others``: token positions of the other things the question names, which end the noun like
    the anchor does ("which notes mention *Gull Island* and X": the noun is "notes").
    ``types``: head words of the graph's node types (with lemmas): a word of the noun that names
    one is its head, whatever follows it ("what contractual *obligations* currently sit with"),
    but an agent noun (:func:`~cef.retrieve.pathagent.agent_noun`) ("which station *commander*").
    ``start``: the token where the question's last sentence begins: a question word in a sentence
    before it is a relative word ("X replaced a coach *who* had ... Which club does ..."), not the
    one that asks, unless the last sentence has none. ``possessive``: the anchor's mention is in the
    possessive ("X's"): right after a copula it opens the noun phrase, and the noun after it is what
    is asked ("who is X's literary *agent*", "what was X's *budget*")."""
    wh = next((i for i, (t, _) in enumerate(tokens) if i >= start and _wh_word(t) and i != at), None)
    if wh is None and start:
        wh = next((i for i, (t, _) in enumerate(tokens) if _wh_word(t) and i != at), None)
    copula = False
    if wh is None:
        j = _request(tokens)
        if j is None:
            return None
        word, opened = "", True
    else:
        word = _wh_word(tokens[wh][0])
        j = wh + 1
        contracted = tokens[wh][0] != word  # "who's the lead"
        opened = word in ("which", "what")
        if word == "how" and j < len(tokens) and tokens[j][0] in ("many", "much"):  # "how many services"
            j += 1
            opened = True
        copula = contracted or (j < len(tokens) and tokens[j][0] in COPULAS)
        if copula and word in _PLACE_TIME:
            # "where is the *equipment* located", "when was the *match* played": the noun is what
            # is placed in space or time, the subject; the question word alone says what is asked
            opened = False
        elif copula:  # "what is the genre", "who was the lead": a noun phrase, no verb in it
            j += 0 if contracted else 1
            opened = not _participle(tokens, j, at, verbs)  # "who is *based* at X": a verb, no noun
            if possessive and j == at:  # "who is X's *agent*": the possessor opens the noun phrase
                j += 2 if j + 1 < len(tokens) and tokens[j + 1][0] == "s" else 1
        elif opened and j + 1 < len(tokens) and tokens[j][0] == "of":  # "which of the vendors"
            j += 1
    while opened and j < len(tokens) and tokens[j][0] in _QUANTIFIERS:
        j += 1
    others = _typed_mention(tokens, j, others, types) if opened else others
    noun, j = _noun_words(tokens, j, at, others, verbs, types) if opened else ([], j)
    if (
        not copula
        and len(noun) > 1
        and (j == at or j in others or (j < len(tokens) and tokens[j][0] in _VERB_OBJECTS))
    ):
        noun.pop()  # "which cluster runs the ...": the last word is the verb
    general = _WH_ASKS.get(word)
    if not noun:
        return (
            AskedFor(_WH_TEXTS.get(general, general), frozenset({general}), None, wh=wh) if general else None
        )
    head = noun[-1]
    typed = [i for i in noun if tokens[i][0] in types or tokens[i][1] in types]
    if typed and head not in typed and not any(agent_noun(*tokens[i]) for i in noun if i > typed[-1]):
        # "what contractual *obligations* currently": the word naming a type heads it; an agent noun
        # after it is the head of a compound the type word modifies ("the station *commander*")
        head = typed[-1]
        noun = noun[: noun.index(head) + 1]
    t, lem = tokens[head]
    lemmas = frozenset({t, lem, lemma(t)})
    if not lemmas.isdisjoint(CLASSIFIER_NOUNS):
        # a classifier says little alone: the words around it say of what ("drug class", "class
        # of disease")
        words = [tokens[i][0] for i in noun]
        if (
            j + 1 < len(tokens)
            and tokens[j][0] == "of"
            and j + 1 != at
            and tokens[j + 1][0] not in FUNCTION_WORDS
        ):
            words += ["of", tokens[j + 1][0]]
        return AskedFor(" ".join(words), lemmas, head, classifier=True, wh=wh)
    return AskedFor(f"{general} {t}" if general else t, lemmas, head, wh=wh)


def _participle(tokens: list[tuple[str, str]], j: int, at: int | None, verbs: frozenset[str]) -> bool:
    """Token ``j`` is a verb's participle that a preposition, the anchor or nothing follows ("who is
    *based* at X", "what is *owned* by X"), read with general English: an inflected -ed / -ing
    form, or a form of a relation's verb (``verbs``) other than its base form. Right after a
    copula it is the verb of a passive or progressive, not a noun (a noun phrase opens with a
    determiner, a possessor or a noun)."""
    if j >= len(tokens) or j == at:
        return False
    t, lem = tokens[j]
    nxt = j + 1
    follows = nxt == at or nxt >= len(tokens) or tokens[nxt][0] in _PREPOSITIONS
    return follows and lem != t and (t.endswith(("ed", "ing")) or lem in verbs)


def _typed_mention(
    tokens: list[tuple[str, str]], j: int, others: frozenset[int], types: frozenset[str]
) -> frozenset[int]:
    """``others`` without a mention that opens the asked noun at token ``j`` and ends in a node
    type's head word ("who's the *SIU investigator* looking into X": the words name a type of the
    graph, whatever else they also match), so it is read as the noun, not as another named thing."""
    k = j
    while k in others:
        k += 1
    if k == j or k - j > 3 or not {tokens[k - 1][0], tokens[k - 1][1]} & types:
        return others
    return others - frozenset(range(j, k))


def _noun_words(
    tokens: list[tuple[str, str]],
    j: int,
    at: int | None,
    others: frozenset[int],
    verbs: frozenset[str],
    types: frozenset[str],
) -> tuple[list[int], int]:
    """The positions of the asked noun's words from token ``j`` on (at most 3), and the position
    after them (see :func:`asked_for`: what ends the noun)."""
    noun: list[int] = []
    while j < len(tokens) and len(noun) < 3:
        t, lem = tokens[j]
        if j == at or j in others or t in FUNCTION_WORDS or t in QUESTION_WORDS or t in _PREPOSITIONS:
            break  # the anchor, another named thing, a function word: the noun ends before it
        if len(t) < 2:
            break
        nxt = tokens[j + 1][0] if j + 1 < len(tokens) else ""
        subject = nxt in COPULAS or nxt in _AUXILIARIES  # "which library *versions* did X ship"
        if (
            noun
            and not subject
            and (lem in verbs or (lem != t and t.endswith(("ed", "ing"))))
            and not {t, lem} & types
        ):
            break  # "which cluster *runs*", "which team *looked* after": a verb ends the noun (a word
            # naming a node type is a noun, even when a relation's name holds it: "research *topics*";
            # so is one an auxiliary follows: the subject's head)
        if (
            lem != t
            and not t.startswith(lem[:3])
            and (nxt in _PREPOSITIONS or not nxt)
            and not {t, lem} & types
        ):
            break  # an irregular verb form before a preposition: "what *came* after X" ("come")
        noun.append(j)
        j += 1
    return noun, j


#: the end of a sentence: the next one begins after it
_SENTENCE_END = re.compile(r"[.!?;]\s+(?=\S)")


def last_sentence(text: str) -> int:
    """The token (:data:`~cef.extract.lemmas.WORD`) where the last sentence of ``text`` begins (0:
    one sentence): "X replaced a coach who had replaced someone. *Which* club does ..."."""
    ends = list(_SENTENCE_END.finditer(text))
    return len(WORD.findall(text[: ends[-1].end()])) if ends else 0


def _request(tokens: list[tuple[str, str]]) -> int | None:
    """Where the noun of a request begins: a request asks too, a verb and then what it asks for
    ("*list* all services that ...", "*name* the team that ...", "give me the owners of X");
    None when the question is no request."""
    j = 1
    while j < len(tokens) and tokens[j][0] in ("me", "us"):
        j += 1
    if not tokens or tokens[0][0] in FUNCTION_WORDS or j >= len(tokens) or tokens[j][0] not in _QUANTIFIERS:
        return None
    return j


def _wh_word(token: str) -> str:
    """The question word ``token`` is, also contracted with a copula ("who's": who), else ""."""
    if token in QUESTION_WORDS:
        return token
    head, _, rest = token.partition("'")
    return head if rest == "s" and head in QUESTION_WORDS else ""
