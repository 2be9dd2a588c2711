"""A trained system: the files translating and paraphrasing read, with their settings.

A :class:`System` names, by role, the bilingual grammar (``grammar``), the decoding LM
(``lm``), the translation weights (``weights``), the reranking LM when the weights name the
n-best reranking feature (``rerank_lm``, :mod:`circle.decoder.rerank`), what recasing needs
(``recaser``), the paraphraser (``paraphrase_grammar``, ``paraphraser_lm``,
``paraphraser_weights``, and ``paraphrase_rerank_lm`` when its weights name the reranking
feature) and, for the weights of a kH_oov run, the tokenised text its OOV
phrases' paraphrases are found in (``oov_text``), together with the languages, lowercasing and
the decoder's search settings.
:meth:`circle.translate.Experiment.system` gives one inside a results directory;
:func:`export_system` (``circle export-system``) copies one into a directory of its own with a
manifest, :data:`MANIFEST` (like Moses' ``moses.ini``), which :meth:`System.load` reads from
anywhere: every file is named relative to the manifest with its size and SHA-256, and a file
whose checksum differs is refused when it is first read.

Where the system lowercases, a :class:`Recaser` restores case in the detokenised output: it
capitalises the first letter of each sentence and gives each word the spelling it has most
often in the training target side (raw text) away from the start of a line, when that spelling
is not all lowercase ("lord" becomes "LORD" only if the training text writes it so more often
than otherwise). It does not model context (a word capitalised in some uses only takes its
most frequent form everywhere), does not capitalise after a sentence end inside a line, and
leaves words unseen in training as the decoder wrote them. An export carries its spellings
(``recaser.tsv``, one ``word<TAB>spelling`` a line), so recasing does not need the training
corpus.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from importlib import metadata
from pathlib import Path

import pyarrow.parquet as pq
import yaml

from circle.core.layout import CORPUS_TABLE, Results
from circle.decoder import DecoderSettings
from circle.decoder.model import RERANK_FEATURE

log = logging.getLogger(__name__)

MANIFEST = "system.yaml"
"""The manifest's file name in an exported system's directory."""

FORMAT = 1
"""The manifest format this version writes and reads."""

ROLES: dict[str, str] = {
    "grammar": "bilingual grammar",
    "lm": "decoding language model",
    "weights": "translation weights",
    "rerank_lm": "reranking language model",
    "recaser": "recaser's spellings",
    "paraphrase_grammar": "paraphrase grammar",
    "paraphraser_lm": "paraphraser's language model",
    "paraphraser_weights": "paraphraser's weights",
    "paraphrase_rerank_lm": "paraphraser's reranking language model",
    "oov_text": "tokenised text of the OOV paraphrases",
}
"""Every role a system's file may have, and what it is."""

RECASER_FILE = "recaser.tsv"


WORD = re.compile(r"\w+(?:['’]\w+)*")


class Recaser:
    """Restores case in detokenised lowercased output (module doc: what it does and doesn't)."""

    def __init__(self, forms: dict[str, str]):
        self.forms = forms
        """Lowercased word → its most frequent training spelling, where that is not lowercase."""

    @classmethod
    def from_text(cls, lines: Iterable[str]) -> Recaser:
        counts: dict[str, Counter] = defaultdict(Counter)
        for line in lines:
            for number, found in enumerate(WORD.finditer(line)):
                if number:  # the first word of a line is capitalised whatever it is
                    word = found.group()
                    counts[word.lower()][word] += 1
        forms = {}
        for key, spellings in counts.items():
            form, _ = spellings.most_common(1)[0]
            if form != key:
                forms[key] = form
        return cls(forms)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Recaser:
        """Learnt from a training table's raw target side (a Parquet file, as an experiment's
        ``corpus/train.parquet``), or read from its spellings as :meth:`write` writes them."""
        path = Path(path)
        if path.suffix == ".parquet":
            return cls.from_text(pq.read_table(path, columns=["target"])["target"].to_pylist())
        forms = {}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            word, tab, form = line.partition("\t")
            if not tab or not word or form.lower() != word:
                raise ValueError(f"{path}, line {number}: not 'word<TAB>spelling' with the "
                                 f"word lowercased: {line!r}")
            forms[word] = form
        return cls(forms)

    def write(self, path: str | os.PathLike) -> None:
        """The spellings, one 'word<TAB>spelling' a line, sorted."""
        Path(path).write_text("".join(f"{word}\t{form}\n"
                                      for word, form in sorted(self.forms.items())),
                              encoding="utf-8")

    def recase(self, text: str, keep: Sequence[tuple[int, int]] = ()) -> str:
        """``text`` recased, but for the words inside the character spans ``keep``."""
        def form(found: re.Match) -> str:
            if any(start <= found.start() and found.end() <= end for start, end in keep):
                return found.group()
            return self.forms.get(found.group().lower(), found.group())

        recased = WORD.sub(form, text)
        for position, character in enumerate(recased):
            if character.isalpha():
                return recased[:position] + character.upper() + recased[position + 1:]
        return recased


@dataclass(frozen=True)
class SystemFile:
    """One file of a system; ``sha256`` and ``size`` (bytes) are those of an export."""

    path: Path
    sha256: str | None = None
    size: int | None = None


def sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


@dataclass
class System:
    """A trained system's files by role (module doc) and its settings."""

    source_lang: str
    target_lang: str
    lowercase: bool
    decoder: dict
    """The config's ``decoder`` section (its search settings)."""
    files: dict[str, SystemFile]
    oov_text: list[SystemFile] = field(default_factory=list)
    oov_paraphrase: dict = field(default_factory=dict)
    """The config's ``oov_paraphrase`` section."""
    seed: int = 13
    where: str = ""
    """Where the system comes from, for messages: a results directory or a manifest."""
    _verified: set[Path] = field(default_factory=set, repr=False)

    def has(self, role: str) -> bool:
        return role in self.files

    def path(self, role: str) -> Path:
        """The file of ``role``, checked against the manifest the first time (a missing role
        or file, or a changed one, is a clear error naming it)."""
        if role not in self.files:
            raise FileNotFoundError(f"{self.where}: names no {ROLES[role]} ({role})")
        return self.verified(self.files[role], role)

    def oov_tables(self) -> list[Path]:
        return [self.verified(entry, "oov_text") for entry in self.oov_text]

    def verified(self, entry: SystemFile, role: str) -> Path:
        """``entry``'s path, for an export once it is known to be the file the manifest names
        (it exists, its size, its SHA-256); a results directory's files are left to the code
        that reads them to report."""
        path = entry.path
        if path in self._verified or entry.sha256 is None:
            return path
        if not path.is_file():
            raise FileNotFoundError(f"{path}: the {ROLES[role]} ({role}) of {self.where} does "
                                    "not exist")
        if entry.size is not None and path.stat().st_size != entry.size:
            raise ValueError(f"{path}: the {ROLES[role]} ({role}) has {path.stat().st_size:,} "
                             f"bytes where {self.where} says {entry.size:,}: the file was "
                             "changed or is incomplete; export the system again")
        if entry.sha256 is not None and (found := sha256(path)) != entry.sha256:
            raise ValueError(f"{path}: the {ROLES[role]} ({role}) has SHA-256 {found} where "
                             f"{self.where} says {entry.sha256}: the file was changed; "
                             "export the system again")
        self._verified.add(path)
        return path

    def overriding(self, **paths: str | os.PathLike | None) -> System:
        """A copy with the files of the given roles replaced (None keeps a role's file)."""
        files = dict(self.files)
        files.update((role, SystemFile(Path(path))) for role, path in paths.items()
                     if path is not None)
        return replace(self, files=files, _verified=set())

    def recaser(self) -> Recaser | None:
        """The system's recaser: None where it keeps case; first letters only, with a
        warning, where it has no recaser file."""
        if not self.lowercase:
            return None
        if not self.has("recaser"):
            log.warning("%s: no training corpus to learn recasing from: recasing capitalises "
                        "first letters only", self.where)
            return Recaser({})
        return Recaser.load(self.path("recaser"))

    def decoder_settings(self, **overrides) -> DecoderSettings:
        """The system's decoder settings, k = 1 unless overridden."""
        return DecoderSettings.from_config({**self.decoder, "k": 1}, **overrides)

    def reranked_nbest(self) -> int:
        """The size of the n-best lists the reranking LM reranks (lm.rerank_nbest): the
        decoder's k, on whose lists the reranking weight was tuned."""
        return DecoderSettings.from_config(self.decoder).k

    @classmethod
    def load(cls, directory: str | os.PathLike) -> System:
        """The system exported to ``directory`` (its :data:`MANIFEST`)."""
        manifest = Path(directory) / MANIFEST
        if not manifest.is_file():
            raise FileNotFoundError(f"{manifest}: no such file (--system names a directory "
                                    "written by circle export-system)")
        try:
            data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
        except yaml.YAMLError as error:
            raise ValueError(f"{manifest}: not valid YAML: {error}") from error
        return _from_manifest(manifest, data)


def _required(manifest: Path, data: dict, key: str, kind: type):
    """``data[key]`` (a dotted key in messages), checked to be a ``kind``."""
    value = data.get(key.rsplit(".", 1)[-1]) if isinstance(data, dict) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{manifest}: key '{key}' must be a {kind.__name__}, found "
                         f"{value!r}")
    return value


def _from_manifest(manifest: Path, data: object) -> System:
    if not isinstance(data, dict):
        raise ValueError(f"{manifest}: not a manifest (a mapping of keys), found {data!r}")
    if data.get("format") != FORMAT:
        raise ValueError(f"{manifest}: key 'format' is {data.get('format')!r}; this circle "
                         f"reads format {FORMAT} (export the system again)")
    languages = _required(manifest, data, "languages", dict)
    tokenizer = _required(manifest, data, "tokenizer", dict)
    if tokenizer.get("sacremoses") != metadata.version("sacremoses"):
        log.warning("%s: exported with sacremoses %s, tokenising with %s: new text may be "
                    "tokenised otherwise", manifest, tokenizer.get("sacremoses"),
                    metadata.version("sacremoses"))
    files: dict[str, SystemFile] = {}
    oov_text: list[SystemFile] = []
    for number, entry in enumerate(_required(manifest, data, "files", list), start=1):
        where = f"files[{number}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{manifest}: {where} must be a mapping, found {entry!r}")
        role = entry.get("role")
        if role not in ROLES:
            raise ValueError(f"{manifest}: {where}.role is {role!r}, not one of "
                             f"{', '.join(ROLES)}")
        relative = _required(manifest, entry, f"{where}.path", str)
        found = SystemFile(manifest.parent / relative,
                           _required(manifest, entry, f"{where}.sha256", str),
                           _required(manifest, entry, f"{where}.bytes", int))
        if role == "oov_text":
            oov_text.append(found)
        elif role in files:
            raise ValueError(f"{manifest}: {where}: a second file of role {role}")
        else:
            files[role] = found
    return System(source_lang=_required(manifest, languages, "languages.source", str),
                  target_lang=_required(manifest, languages, "languages.target", str),
                  lowercase=_required(manifest, languages, "languages.lowercase", bool),
                  decoder=_required(manifest, data, "decoder", dict), files=files,
                  oov_text=oov_text, oov_paraphrase=data.get("oov_paraphrase") or {},
                  seed=int(data.get("seed", 13)), where=str(manifest))


def place(source: Path, target: Path) -> None:
    """``source`` at ``target``: a hard link where both are on one file system, else a copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def export_system(system: System, root: Path, out: str | os.PathLike, made_with: str,
                  made_from: dict) -> Path:
    """Write ``system`` into the empty or new directory ``out``: its files, each at its path
    relative to ``root`` (the results directory), the recaser's spellings as
    :data:`RECASER_FILE`, and the manifest; ``made_with`` names circle's version and commit,
    ``made_from`` the experiment and run. Weights naming the n-best reranking feature bring
    the reranking LM (role ``rerank_lm``; for the paraphraser's weights the paraphraser's,
    ``paraphrase_rerank_lm``) and keep the decoder's k, the n-best size reranked
    (:meth:`System.reranked_nbest`). Returns the manifest's path."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"{out}: exists and is not an empty directory (export into a new "
                         "one)")
    entries = []

    def add(role: str, source: Path) -> None:
        if not source.is_file():
            raise FileNotFoundError(f"{source}: the {ROLES[role]} ({role}) to export does not "
                                    "exist")
        relative = source.relative_to(root) if source.is_relative_to(root) \
            else Path(role) / source.name
        if not (out / relative).exists():  # a file of two roles (a shared LM) is placed once
            place(source, out / relative)
        entries.append({"role": role, "path": relative.as_posix(),
                        "sha256": sha256(out / relative), "bytes": (out / relative).stat().st_size})

    for role in ("grammar", "lm", "weights"):
        add(role, system.path(role))
    reranked = _weighted(system.path("weights"), RERANK_FEATURE)
    if reranked:
        add("rerank_lm", system.path("rerank_lm"))
    if system.lowercase:
        if not system.has("recaser"):
            raise FileNotFoundError(f"{Results.at(root).path(CORPUS_TABLE, split='train')}: "
                                    "the training corpus recasing learns from does not exist; "
                                    "the export needs it")
        out.mkdir(parents=True, exist_ok=True)
        Recaser.load(system.path("recaser")).write(out / RECASER_FILE)
        entries.append({"role": "recaser", "path": RECASER_FILE,
                        "sha256": sha256(out / RECASER_FILE),
                        "bytes": (out / RECASER_FILE).stat().st_size})
    for role in ("paraphrase_grammar", "paraphraser_lm", "paraphraser_weights"):
        if system.has(role) and system.files[role].path.is_file():
            add(role, system.path(role))
    paraphraser_reranked = any(entry["role"] == "paraphraser_weights" for entry in entries) \
        and _weighted(system.path("paraphraser_weights"), RERANK_FEATURE)
    if paraphraser_reranked:
        add("paraphrase_rerank_lm", system.path("paraphrase_rerank_lm"))
    from circle.grammar.oov_paraphrase import FEATURE as OOV_FEATURE

    weights_oov = _weighted(system.path("weights"), OOV_FEATURE)
    for table in system.oov_tables() if weights_oov else []:
        add("oov_text", table)
    manifest = {
        "format": FORMAT, "circle": made_with, "made_from": made_from,
        "languages": {"source": system.source_lang, "target": system.target_lang,
                      "lowercase": system.lowercase},
        "tokenizer": {"sacremoses": metadata.version("sacremoses"), "escape": True,
                      "normalization": "NFC"},
        "decoder": asdict(system.decoder_settings(
            k=system.reranked_nbest() if reranked or paraphraser_reranked else None)),
        "seed": system.seed,
        **({"oov_paraphrase": system.oov_paraphrase} if weights_oov else {}),
        "files": entries,
    }
    path = out / MANIFEST
    path.write_text("# A trained circle system: circle translate --system DIR (docs/usage.md, "
                    "'Use a trained system')\n" + yaml.safe_dump(manifest, sort_keys=False),
                    encoding="utf-8")
    return path


def _weighted(weights: Path, feature: str) -> bool:
    """Whether a weight file weights ``feature``."""
    from circle.decoder import read_weights

    return feature in read_weights(weights)


__all__ = ["FORMAT", "MANIFEST", "ROLES", "Recaser", "System", "SystemFile", "export_system",
           "sha256"]
