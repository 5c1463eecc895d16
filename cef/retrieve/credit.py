"""Who a dialogue turn speaks about: a question that credits one speaker is not answered by what
another speaker said of themselves.

A conversation's turns are chunks whose metadata says who spoke (``speaker``) and what they said
(``text``), their content ending with the turn they reply to (``(in reply to Speaker: …)``; see
:mod:`cef.memory.conversation`). A question that names exactly one of the speakers ("What did
*Melanie* make for the church?") asks about that speaker. Of a turn's chunk, the evidence for it is
what that speaker said (their own turn, or the turn replied to when it was theirs) but for the
sentences about their hearer ("Glad *your* son is okay": "you", no "I" or "my"; these are left out),
and the sentences of another speaker that name them or address them as the hearer. Another speaker's words that do not name them ("Caroline: I made a stained
glass window for the church", or the same as the line a reply of Melanie's answers) are about their
own speaker, whatever words they share with the question. No data set's words: speakers and names
only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cef.model import Chunk, RankedChunk
from cef.retrieve.dialoguequestion import named_speaker as speaker_named
from cef.retrieve.english import GREETINGS

__all__ = ["addresses_hearer", "credited_text", "named_speaker", "people", "unframed"]

#: the line a turn's chunk ends with, the turn it answers (:func:`cef.memory.conversation.turn_content`)
_REPLY = re.compile(r"\n\(in reply to ([^:\n]+): (.*)\)\s*$", re.DOTALL)
#: words by which a speaker addresses the hearer, and speaks of themselves
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "yourselves", "you're", "you've", "you'll"})
FIRST_PERSON = frozenset(
    {"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "i'm", "i've", "i'll"}
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def _speaker(chunk: Chunk) -> str | None:
    speaker = chunk.metadata.get("speaker")
    return speaker if isinstance(speaker, str) and speaker.strip() else None


#: a turn's head (:func:`cef.memory.conversation.turn_content`): "Speaker (8 May 2023): "
_HEAD = re.compile(r"\A([^\n:]*?)(?: \([^)\n]*\))?: ")


def unframed(chunk: Chunk) -> str:
    """A dialogue turn's chunk with the colons of its framing ("Joanna (21 April 2022): Heard of ...",
    "(in reply to Nate: I love ...") made full stops: the word after one opens a sentence (it is no
    name the turn gives). Any other chunk's content as it is."""
    speaker = _speaker(chunk)
    if speaker is None:
        return chunk.content
    text = chunk.content
    reply = _REPLY.search(text)
    if reply is not None:  # "(in reply to Nate: I love ..." -> "(in reply to Nate. I love ..."
        text = f"{text[: reply.start(2) - 2]}. {text[reply.start(2) :]}"
    head = _HEAD.match(text)
    if head is not None and head.group(1) == speaker:
        text = f"{text[: head.end() - 2]}. {text[head.end() :]}"
    return text


def people(results: Sequence[RankedChunk]) -> list[str]:
    """The people of the results' dialogue turns: who speaks each and who they reply to (a turn of
    one speaker's says the other's name as its hearer: "Hey Jon, my store ...")."""
    out: dict[str, None] = {}
    for rc in results:
        speaker = _speaker(rc.chunk)
        if speaker is None:
            continue
        out[speaker] = None
        reply = _REPLY.search(rc.chunk.content)
        if reply is not None:
            out[reply.group(1).strip()] = None
    return list(out)


def _name_words(name: str) -> list[str]:
    return _WORD.findall(name.lower())


def named_speaker(question: str, results: Sequence[RankedChunk]) -> str | None:
    """The one speaker of the results' dialogue turns the question names
    (:func:`cef.retrieve.dialoguequestion.named_speaker`); None when it names none of them or several."""
    return speaker_named(question, (s for rc in results if (s := _speaker(rc.chunk)) is not None))


def _names(text: str, person: str) -> bool:
    """Whether ``text`` says ``person``'s first name other than to address them: "Hi Melanie!",
    "Thanks, Melanie." call the hearer; "Melanie's kids", "Melanie said" speak of her."""
    parts = _name_words(person)
    if not parts:
        return False
    for m in re.finditer(rf"\b{re.escape(parts[0])}\b", text, re.IGNORECASE):
        before = text[: m.start()].rstrip()
        after = text[m.end() :].lstrip()
        greeted = _WORD.findall(before.lower())[-1:] in ([g] for g in GREETINGS)
        if not (greeted or after[:1] in {",", "!", "?"} or (before.endswith(",") and after[:1] in {".", ""})):
            return True
    return False


def addresses_hearer(sentence: str) -> bool:
    """A sentence about its hearer: it says "you" or "your" and no "I", "my" or "we"."""
    words = set(_WORD.findall(sentence.lower()))
    return not SECOND_PERSON.isdisjoint(words) and FIRST_PERSON.isdisjoint(words)


def _of(text: str, person: str, theirs: bool, to_them: bool) -> tuple[list[str], list[str]]:
    """The sentences of ``text`` that speak of ``person`` and those that speak of another. Their own
    words (``theirs``) speak of them, but for a sentence about their hearer, which is left out of
    both (it may ask the hearer what they themselves did); another speaker's sentence speaks of them
    when it names them or addresses them as its hearer (``to_them``), else of another."""
    said: list[str] = []
    rest: list[str] = []
    for sentence in _SENTENCE.split(text):
        if _names(sentence, person):
            said.append(sentence)
        elif theirs:
            if not addresses_hearer(sentence):  # what they say of their hearer is neither's evidence
                said.append(sentence)
        else:
            (said if to_them and addresses_hearer(sentence) else rest).append(sentence)
    return said, rest


def credited_text(chunk: Chunk, person: str) -> tuple[str, str] | None:
    """What a dialogue turn's chunk says of ``person`` and what it says of others: of its parts (the
    turn's own text and caption, the turn it replies to), those ``person`` spoke and the sentences of
    the others' that speak of them (name them, or address them as the hearer: in a dialogue the
    hearer of a reply is the speaker replied to), with their name when any is kept; and the rest.
    None for a chunk that is no dialogue turn (no speaker), which is not judged."""
    speaker = _speaker(chunk)
    if speaker is None:
        return None
    own = chunk.metadata.get("text")
    caption = chunk.metadata.get("image_caption")
    reply = _REPLY.search(chunk.content)
    replied = reply.group(1).strip() if reply is not None else None
    parts = [(speaker, own if isinstance(own, str) else chunk.content, replied)]
    if isinstance(caption, str):
        parts.append((speaker, caption, None))
    if reply is not None:
        parts.append((reply.group(1).strip(), reply.group(2), speaker))
    said: list[str] = []
    rest: list[str] = []
    for who, text, hearer in parts:
        of, other = _of(text, person, who == person, hearer == person)
        said += of
        rest += other
    # the name ends a sentence of its own: a turn's first word is no name given ("Jon. Searching for ...")
    return (". ".join([person, " ".join(said)]) if said else "", " ".join(rest))
