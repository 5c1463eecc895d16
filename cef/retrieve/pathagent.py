"""Agent nouns: an asked noun that names a relation by English derivation, not a node type.

"Who are the *actors* in X", "which *director*", "the *writer* of": every person may be one node
type (``Person``), so the asked noun tells no type apart; it is the agent form of a relation's verb
(act → actor, direct → director, write → writer) and names the relation whose end the answer is.
:func:`agent_noun` reads the form by its derivational ending (general English morphology, no word
list); :func:`agent_relations` finds the candidate relations whose name or description holds the
noun or its verb (:func:`~cef.retrieve.qwords.stem_match`: "actors" / "actor", "director" /
"directed", "writer" / "written"). The path score (:mod:`cef.retrieve.pathscore`) rewards a path
whose *last* hop walks one of them (``PathSettings.agent_noun``): the agent is the answer, so the
path ends there, not one hop past it nor one short of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import pairwise

from cef.retrieve.pathcues import RelationWords
from cef.retrieve.qwords import stem_match

__all__ = ["AGENT_ENDINGS", "agent_noun", "agent_relations"]

#: English derivational endings of agent nouns (the doer of a verb): -er / -or ("writer",
#: "actor"), -ist ("novelist"), -ant / -ent ("occupant", "resident"), -ee ("employee"); a closed
#: class of English suffixes, not of any domain's words
AGENT_ENDINGS = ("er", "or", "ist", "ant", "ent", "ee")
#: letters a base must keep before the ending ("act" + "or"): shorter words are no derivations
#: ("her", "for", "ant")
_BASE_LETTERS = 3


def agent_noun(token: str, lemma: str) -> bool:
    """Whether a word (``token``, its ``lemma``) has the form of an English agent noun: its singular
    ends in an agent ending (:data:`AGENT_ENDINGS`) after a base of 3+ letters that holds a vowel
    ("actors", "director", "producer"; not "her", "for", "ant"). The form alone: "water" has it too,
    and names a relation only where a relation's words hold it (:func:`agent_relations`)."""
    word = lemma if lemma and lemma != token and not token.endswith(("ed", "ing")) else token
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]  # a plural the lemmatizer left
    for ending in AGENT_ENDINGS:
        if word.endswith(ending):
            base = word[: -len(ending)]
            return len(base) >= _BASE_LETTERS and any(c in "aeiouy" for c in base)
    return False


def agent_relations(
    token: str,
    lemma: str,
    relations: Iterable[str],
    words_of: Callable[[str], RelationWords],
    lemma_of: Callable[[str], str],
    modifier: tuple[str, str] | None = None,
) -> frozenset[str]:
    """The relations an agent noun (``token``, ``lemma``) names: those whose name words (either
    direction) hold the noun or its verb by :func:`~cef.retrieve.qwords.stem_match` ("director":
    DIRECTED_BY); when no name does, those whose description does ("actors": PLAYED_BY, described
    "a character is portrayed by an *actor*"). A compound outranks both: when the noun has a
    ``modifier`` (the word before it, with its lemma) and a description holds the two words in a
    row, the relations so described are the ones ("the *station commander*": "a station is run by a
    *station commander*", not COMMANDED_BY's "a watch is led by a *watch commander*"). Empty when
    the word is no agent noun (:func:`agent_noun`)."""
    if not agent_noun(token, lemma):
        return frozenset()
    relations = list(relations)

    def holding(words: Callable[[RelationWords], Iterable[str]]) -> frozenset[str]:
        return frozenset(
            r for r in relations if any(stem_match(token, w, lemma, lemma_of(w)) for w in words(words_of(r)))
        )

    # a name says what a relation is, a description may name its other end too ("a *manager* or
    # agent is employed by an agency"): descriptions count only when no name holds the noun
    if modifier is not None:
        m, lm = modifier
        compound = frozenset(
            r
            for r in relations
            if any(
                stem_match(m, a, lm, lemma_of(a)) and stem_match(token, b, lemma, lemma_of(b))
                for a, b in pairwise(words_of(r).description)
            )
        )
        if compound:
            return compound
    named = holding(lambda rw: (*rw.forward, *(rw.inverse or [])))
    return named or holding(lambda rw: rw.description)
