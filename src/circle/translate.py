"""Translating and paraphrasing new text with a finished experiment (``circle translate``,
``circle paraphrase``).

An :class:`Experiment` is one results directory, ``results/<experiment>``, found from the
project root (the checkout with the Snakefile), not from the working directory; its effective
config (``config.yaml``) gives the languages, the lowercasing and the decoding LM's order.
:meth:`Experiment.system` names its files as a :class:`circle.system.System`, which is what
:class:`Translator` and the paraphraser read; a system exported with ``circle export-system``
is read the same way, so both translate alike.

New text needs the rules of the experiment's full bilingual grammar that can apply to it, too
many to load at once: :func:`circle.grammar.filter.rules_for` reads them in bounded memory, the
row groups that can hold them only, and keeps those the workflow's ``filter_grammar`` would
keep. Input is translated in chunks of :data:`CHUNK_SENTENCES` sentences, each with its own
rules, so memory stays bounded for long inputs too.

Words that no rule translates on their own are passed through by the decoder (its ``oov``
feature); :class:`Translation` lists them. In the output they can be marked
(:class:`UnknownMarks`, Moses' ``-mark-unknown``) and the recased text gives them the input's
spelling (:func:`render`; the decoder counts them but does not say where they went, so each is
taken to be the output token spelt as it nearest its place in the input). With the weights of a
kH_oov run (which weight the paraphrase feature ``log_paraphrase_similarity``), the OOV phrases
of each chunk first borrow rules from their distributional paraphrases
(:class:`OovParaphrases`), as the workflow's augmented tune and test grammars do. With
weights tuned with n-best reranking (lm.rerank_nbest, which weight ``lm_rerank``) the decoder's
k-best lists of the config's k are reranked with the reranking LM, as in tuning
(:mod:`circle.decoder.rerank`); so are the paraphraser's, with the paraphraser's reranking LM,
when its weights name it.

Where the experiment lowercases, the output is recased (:class:`circle.system.Recaser`).
"""

from __future__ import annotations

import functools
import html
import itertools
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import yaml

from circle.core.layout import (
    BILINGUAL_GRAMMAR,
    CORPUS_TABLE,
    TOKENIZED_TABLE,
    TUNING_LOG,
    UNTUNED_PARAPHRASE,
    WEIGHTS,
    Results,
)
from circle.core.schemas import BITEXT, EVALSET
from circle.core.tables import read_metadata
from circle.corpus.preprocess import detokenize, normalize
from circle.decoder import (
    DecoderSettings,
    Grammar,
    Hypothesis,
    LanguageModel,
    decode_corpus,
    read_weights,
)
from circle.decoder.chart import match
from circle.decoder.model import RERANK_FEATURE
from circle.decoder.rerank import rerank_depth
from circle.distributional import DistributionalSettings, MonolingualCorpus
from circle.experiments.conditions import BASELINE_CONDITION, UNTUNED_TRANSLATION, TuningRun
from circle.grammar.filter import RowGroups, RuleReadStats, rules_for
from circle.grammar.oov_paraphrase import FEATURE as OOV_FEATURE
from circle.grammar.oov_paraphrase import borrowed_for, one_word_sources, source_texts
from circle.paraphrase.config import bias_name
from circle.system import Recaser, System, SystemFile

log = logging.getLogger(__name__)

PROJECT_ENV = "CIRCLE_PROJECT"
"""Environment variable naming the project root (the directory with the Snakefile)."""

CHUNK_SENTENCES = 200
"""Sentences translated with one set of rules read from the grammar."""


def project_root(given: str | os.PathLike | None = None) -> tuple[Path, str]:
    """The project root and how it was found: ``given``, else ``$CIRCLE_PROJECT``, else the
    checkout this package runs from (if it holds a Snakefile), else the nearest directory
    above the working directory that holds a Snakefile, else the working directory."""
    if given is not None:
        return Path(given).resolve(), "--project"
    if os.environ.get(PROJECT_ENV):
        return Path(os.environ[PROJECT_ENV]).resolve(), f"${PROJECT_ENV}"
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "Snakefile").is_file():
        return checkout, "the checkout circle runs from"
    for directory in [Path.cwd(), *Path.cwd().parents]:
        if (directory / "Snakefile").is_file():
            return directory, "the nearest directory with a Snakefile"
    return Path.cwd(), "the working directory (no Snakefile found)"


def results_directory(results: str | os.PathLike | None, experiment: str | None,
                      project: str | os.PathLike | None = None) -> Path:
    """``results`` (absolute, or relative to the project root), else
    ``results/<experiment>`` under the project root (``experiment`` defaults to 'default')."""
    root, _ = project_root(project)
    if results is not None:
        return root / results  # an absolute path stays itself
    return Results.of(root, experiment or "default").directory


def existing_results(results: str | os.PathLike) -> Path:
    """``results`` if it is a directory, else FileNotFoundError naming it and the experiments
    beside it (an experiment misspelt or not run yet)."""
    results = Path(results)
    if results.is_dir():
        return results
    found = sorted(p.name for p in results.parent.iterdir() if p.is_dir()) \
        if results.parent.is_dir() else []
    raise FileNotFoundError(f"{results}: no such results directory (experiments in "
                            f"{results.parent}: {', '.join(found) or 'none'}; name one with "
                            "--experiment, or give --results)")


@functools.cache
def config_schema() -> dict:
    from circle.pipeline.config import CONFIG_SCHEMA

    return yaml.safe_load(CONFIG_SCHEMA.read_text(encoding="utf-8"))


def schema_default(section: str | None, key: str) -> Any:
    """The config schema's default of ``key`` in ``section`` (None: a top-level key), None
    where it has none."""
    properties = config_schema()["properties"]
    if section is not None:
        properties = properties[section]["properties"]
    return properties[key].get("default")


@dataclass
class Experiment:
    """A finished experiment's results directory and its effective config."""

    results: Path
    config: dict = field(default_factory=dict)

    @classmethod
    def at(cls, results: str | os.PathLike) -> Experiment:
        path = Results.at(results).config
        config = yaml.safe_load(path.read_text()) if path.is_file() else {}
        return cls(Path(results), config or {})

    @property
    def layout(self) -> Results:
        """The files of the results directory (:mod:`circle.core.layout`)."""
        return Results.at(self.results)

    def setting(self, section: str | None, key: str) -> Any:
        """The effective config's ``key`` of ``section`` (None: a top-level key); where it
        records none (no ``config.yaml``, or one written before the key existed), the config
        schema's default, which the workflow would have filled in."""
        recorded = self.config if section is None else self.config.get(section, {})
        return recorded[key] if key in recorded else schema_default(section, key)

    @property
    def source_lang(self) -> str:
        return self.setting("preprocess", "source_lang")

    @property
    def target_lang(self) -> str:
        return self.setting("preprocess", "target_lang")

    @property
    def lowercase(self) -> bool:
        return bool(self.setting("preprocess", "lowercase"))

    @property
    def lm(self) -> Path:
        """The LM the MT system decodes with (lm.decoding_order)."""
        return self.layout.lm(self.setting("lm", "decoding_order"))

    @property
    def paraphraser_lm(self) -> Path:
        """The LM the experiment's paraphraser decodes with: its own with
        ``paraphrase.language_models: pivots`` (:mod:`circle.corpus.pivots`), else :attr:`lm`."""
        return self._paraphraser(self.setting("lm", "decoding_order"), self.lm)

    @property
    def paraphraser_reranking_lm(self) -> Path:
        """The LM that reranks the paraphraser's n-best lists when its weights name the n-best
        reranking feature, as in the workflow's paraphrase_references job
        (:meth:`circle.pipeline.plan.Plan.nbest_reranking_inputs`): its own with
        ``paraphrase.language_models: pivots``, else :attr:`reranking_lm`."""
        return self._paraphraser(self.setting("lm", "reranking_order"), self.reranking_lm)

    def _paraphraser(self, order: int, lm: Path) -> Path:
        """The paraphraser's own LM of ``order`` with ``paraphrase.language_models: pivots``,
        else ``lm`` (the MT system's of that order)."""
        if self.setting("paraphrase", "language_models") != "pivots":
            return lm
        return self.layout.paraphraser_lm(order)

    @property
    def reranking_lm(self) -> Path:
        """The LM that reranks the MT n-best lists when the weights name the n-best reranking
        feature (lm.rerank_nbest, :mod:`circle.decoder.rerank`)."""
        return self.layout.lm(self.setting("lm", "reranking_order"))

    @property
    def grammar(self) -> Path:
        return self.layout.path(BILINGUAL_GRAMMAR)

    def paraphraser_weights(self) -> tuple[Path, str]:
        """The paraphraser's weights, and a sentence saying which: the tuned ones (the
        ``tune_paraphraser`` rule's) where they exist, else the untuned ones."""
        tuned = self.layout.paraphraser_weights(bias_name(0.0))
        if tuned.exists():
            return tuned, f"the tuned paraphraser weights {tuned}"
        untuned = self.layout.weights(UNTUNED_PARAPHRASE)
        return untuned, (f"the UNTUNED weights {untuned}: warning, there are no tuned ones at "
                         f"{tuned} (a plain rerun of the workflow rebuilds them, or give "
                         "--weights)")

    def system(self, weights: Path | None = None) -> System:
        """The experiment's files as a :class:`circle.system.System`, translating with
        ``weights``; recasing learns from ``corpus/train.parquet`` (first letters only,
        with a warning, without it)."""
        files = {"grammar": self.grammar, "lm": self.lm, "rerank_lm": self.reranking_lm,
                 "paraphrase_grammar": self.layout.paraphrase_grammar(bias_name(0.0)),
                 "paraphraser_lm": self.paraphraser_lm,
                 "paraphrase_rerank_lm": self.paraphraser_reranking_lm,
                 "paraphraser_weights": self.paraphraser_weights()[0]}
        if weights is not None:
            files["weights"] = weights
        train = self.layout.path(CORPUS_TABLE, split="train")
        if self.lowercase and train.is_file():
            files["recaser"] = train
        oov_text = [SystemFile(path) for path in self.layout.files(TOKENIZED_TABLE)
                    if read_metadata(path).get("schema") in (BITEXT.name, EVALSET.name)]
        return System(self.source_lang, self.target_lang, self.lowercase,
                      dict(self.config.get("decoder", {})),
                      {role: SystemFile(path) for role, path in files.items()}, oov_text,
                      dict(self.config.get("oov_paraphrase", {})),
                      int(self.setting(None, "seed")), str(self.results))

    def translation_weights(self, given: str | None) -> tuple[Path, str]:
        """The weight file to translate with, and a sentence saying which and why: ``given``
        (a run name such as '1H.rep0', i.e. weights/<run>.txt, or a file), else the 1H
        replicate with the best tune score, else the untuned weights (with a warning)."""
        if given is not None:
            named = self.layout.weights(given)
            if named.is_file():
                return named, f"the weights of run {given}, {named}"
            path = Path(given)
            if path.is_file():
                return path, f"the weights {path}"
            runs = [p.stem for p in self.layout.files(WEIGHTS)]
            raise FileNotFoundError(f"--weights {given}: neither a run of {self.results} "
                                    f"({named} does not exist; runs: {', '.join(runs) or 'none'})"
                                    " nor a weight file")
        best = best_tuned_run(self.results, BASELINE_CONDITION)
        if best is not None:
            run, metric, score, count = best
            return self.layout.weights(run), (
                f"the weights of {run}, {self.layout.weights(run)}: the best tune "
                f"{metric.upper()} ({100 * score:.2f}) of the {count} tuned 1H replicate(s) "
                "(choose another with --weights RUN)")
        untuned = self.layout.weights(UNTUNED_TRANSLATION)
        return untuned, (f"the UNTUNED weights {untuned}: warning, no 1H run of "
                         f"{self.results} is tuned yet (run the workflow, or give --weights)")


def best_tuned_run(results: Path, condition: str) -> tuple[str, str, float, int] | None:
    """(run, metric, tune score, runs compared) of the replicate of ``condition`` whose tuning
    log returned the best decoded tune score and whose weights exist; None if there is none."""
    from circle.core import schemas
    from circle.core.tables import SchemaError, read_table
    from circle.tune.metrics import get_metric

    layout = Results.at(results)
    found = []
    for log_path in layout.files(TUNING_LOG, run=f"{condition}{TuningRun.SEPARATOR}*"):
        run = log_path.name.removesuffix(".parquet")
        if not layout.weights(run).is_file():
            continue
        try:
            table = read_table(log_path, schemas.TUNING_LOG)
        except SchemaError as error:
            raise SchemaError(f"{error}: its tuning logs were written by another version of "
                              "circle, so the best replicate cannot be chosen; name the weights "
                              f"with --weights (e.g. --weights {run}), or rerun the workflow to "
                              "tune again") from error
        returned = table[table["returned"]]
        if len(returned):
            found.append((run, str(returned["metric"].iloc[0]),
                          float(returned["decode_score"].iloc[0])))
    if not found:
        return None
    metric = get_metric(found[0][1])
    best = found[0]
    for candidate in found[1:]:
        if metric.better(candidate[2], best[2]):
            best = candidate
    return (*best, len(found))


def grammar_from_rules(rules: pa.Table, feature_names: Sequence[str]) -> Grammar:
    """A decoder :class:`Grammar` of a table of rules with the given feature columns."""
    values = np.column_stack([rules[name].to_numpy() for name in feature_names]) \
        if rules.num_rows else np.empty((0, len(feature_names)))
    def strings(name: str) -> pa.Array:
        return rules[name].combine_chunks().cast(pa.large_string())

    return Grammar(strings("source"), strings("target"), values, feature_names)


@dataclass(frozen=True)
class UnknownMarks:
    """How passed-through words are marked in the output (Moses' ``-mark-unknown``)."""

    prefix: str = "UNK_"
    suffix: str = ""

    def wrap(self, word: str) -> str:
        return f"{self.prefix}{word}{self.suffix}"


@dataclass
class Output:
    """One output string, tokenised, detokenised and recased (None where no recaser)."""

    tokenized: str
    detokenized: str
    recased: str | None


@dataclass
class Translation(Output):
    """One input line's translation."""

    source: str = ""
    """The input, tokenised (and lowercased where the experiment lowercases)."""
    untranslated: list[str] = field(default_factory=list)
    """The words no rule translates on their own, which the decoder copied (pass-through)."""
    nbest: list[Hypothesis] = field(default_factory=list)
    """The n-best list (passed-through words marked as in ``tokenized``), when asked for."""


def passed_through(words: Sequence[str], candidates: Sequence[int],
                   hypothesis: Hypothesis | None, known: set[str] | None) -> list[int]:
    """The positions of the input words ``hypothesis`` copies untranslated, as many as its
    ``oov`` feature counts: of the ``candidates`` (the positions of the words no rule
    translates on their own), first those in no rule at all (not in ``known``, the source
    words of the rules; None: every word may be in a rule), then those found in the output (a
    word with rules only in larger phrases may be translated inside one)."""
    if hypothesis is None:
        return list(range(len(words)))
    count = round(hypothesis.features.get("oov", 0.0))
    output = Counter(hypothesis.text.split())
    unknown = [p for p in candidates if known is not None and words[p] not in known]
    copied = []
    for position in candidates:
        if position not in unknown and output[words[position]] > 0:
            output[words[position]] -= 1
            copied.append(position)
    rest = [p for p in candidates if p not in unknown and p not in copied]
    return (unknown + copied + rest)[:count]


def copied_tokens(tokens: Sequence[str], words: Sequence[str], positions: Iterable[int]
                  ) -> dict[int, int]:
    """Output token index → input position of the passed-through words at ``positions``. The
    decoder reports how many words it copies, not where they went: each is taken to be the
    unclaimed output token spelt as it whose relative place in the output is nearest its
    relative place in the input."""
    found: dict[int, int] = {}
    for position in sorted(positions):
        same = [j for j, token in enumerate(tokens) if token == words[position] and j not in found]
        if same:
            found[min(same, key=lambda j: abs(j / len(tokens) - position / len(words)))] = position
    return found


def token_spans(tokens: Sequence[str], text: str) -> list[tuple[int, int] | None]:
    """The character span of each token in its detokenised ``text``, in order (None for a
    token the detokeniser changed)."""
    spans: list[tuple[int, int] | None] = []
    cursor = 0
    for token in tokens:
        plain = html.unescape(token)
        start = text.find(plain, cursor)
        if start < 0:
            spans.append(None)
            continue
        cursor = start + len(plain)
        spans.append((start, cursor))
    return spans


def render(text: str, words: Sequence[str], cased: Sequence[str], positions: Iterable[int],
           lang: str, recaser: Recaser | None, marks: UnknownMarks | None) -> Output:
    """An output string (tokenised, as the decoder writes it) of input ``words`` (``cased``:
    the same tokens as written), whose words at ``positions`` were passed through: those are
    marked with ``marks``, and in the recased text they keep the input's spelling."""
    tokens = text.split()
    copies = copied_tokens(tokens, words, positions)

    def marked(j: int, token: str) -> str:
        return marks.wrap(token) if marks is not None and j in copies else token

    tokenized = " ".join(marked(j, token) for j, token in enumerate(tokens))
    detokenized = detokenize(tokenized, lang)
    if recaser is None:
        return Output(tokenized, detokenized, None)
    kept = [marked(j, cased[copies[j]] if j in copies else token)
            for j, token in enumerate(tokens)]
    plain = detokenize(" ".join(kept), lang)
    spans = token_spans(kept, plain)
    keep = [span for j, span in enumerate(spans) if j in copies and span is not None]
    return Output(tokenized, detokenized, recaser.recase(plain, keep))


def cased_tokens(line: str, words: Sequence[str], lang: str) -> list[str]:
    """The tokens of ``line`` as written, where they are ``words`` with their case (else
    ``words``: tokenised input gives nothing more)."""
    cased = normalize(line, lang, lowercase=False).split()
    return cased if [token.lower() for token in cased] == list(words) else list(words)


Progress = Callable[[str], None]


class OovParaphrases:
    """New text's OOV phrases translated through their distributional paraphrases (Marton,
    Callison-Burch & Resnik 2009; :mod:`circle.grammar.oov_paraphrase`), as the workflow's
    augmented grammars are for the tune and test sets: the monolingual source text is the
    system's tokenised tables (an experiment's splits and the training verses a sample left
    out), indexed once with its ``oov_paraphrase`` settings."""

    def __init__(self, system: System, bilingual: Path):
        tables = system.oov_tables()
        if not tables:
            raise FileNotFoundError(f"{system.where}: no tokenised splits, the monolingual "
                                    "text of the OOV paraphrases")
        settings = DistributionalSettings.from_config(system.oov_paraphrase, system.seed)
        started = time.monotonic()
        self.corpus = MonolingualCorpus(source_texts(tables), settings)
        self.bilingual = bilingual
        self.borrowed = 0
        log.info("indexed %d monolingual words of %d tables in %.1f s", self.corpus.words,
                 len(tables), time.monotonic() - started)

    def augment(self, rules: pa.Table, sentences: Sequence[str]) -> pa.Table:
        """A chunk's rules with the paraphrase feature (0 on its own rules, ln h on the
        rules its OOV phrases borrow, which are appended)."""
        sources = pc.unique(rules["source"])
        borrowed = borrowed_for(sentences, set(sources.to_pylist()), one_word_sources(sources),
                                self.corpus, self.bilingual)
        self.borrowed += len(borrowed)
        own = rules.append_column(OOV_FEATURE, pa.array(np.zeros(rules.num_rows)))
        if borrowed.empty:
            return own
        extra = pa.Table.from_pandas(borrowed[own.column_names], preserve_index=False)
        return pa.concat_tables([own, extra.cast(own.schema)])


class Translator:
    """A system's decoder for new text: its language model loaded once, the rules read per
    chunk of input (:func:`~circle.grammar.filter.rules_for`; with ``cache_bytes``, the
    grammar's row groups read are kept for the next chunks), its weights."""

    def __init__(self, system: System, settings: DecoderSettings | None = None,
                 workers: int = 1, cache_bytes: int = 0):
        self.system = system
        self.grammar_path = system.path("grammar")
        if not self.grammar_path.is_file():
            raise FileNotFoundError(f"{self.grammar_path}: the experiment's bilingual grammar "
                                    "does not exist (snakemake ... grammars builds it)")
        from circle.decoder import grammar_features

        self.features = grammar_features(self.grammar_path)
        self.groups = RowGroups(self.grammar_path, cache_bytes)
        """The grammar's row groups, up to ``cache_bytes`` of them kept from line to line."""
        self.lm = LanguageModel(system.path("lm"))
        self.weights = read_weights(system.path("weights"))
        self.reranking = (LanguageModel(system.path("rerank_lm"))
                          if RERANK_FEATURE in self.weights else None)
        """Weights tuned with lm.rerank_nbest: the system's reranking LM reranks its
        :meth:`System.reranked_nbest`-best lists, as in tuning (:mod:`circle.decoder.rerank`)."""
        self.oov_paraphrases = (OovParaphrases(system, self.grammar_path)
                                if OOV_FEATURE in self.weights else None)
        """Weights of a kH_oov run (they weight the paraphrase feature): each chunk's OOV
        phrases borrow rules from their distributional paraphrases, as in the workflow."""
        self.settings = settings or system.decoder_settings()
        self.workers = workers
        self.recaser = system.recaser()
        self.stats = RuleReadStats()

    def translate(self, lines: Iterable[str], tokenized: bool = False,
                  progress: Progress | None = None, k: int = 1,
                  marks: UnknownMarks | None = None, chunk: int = CHUNK_SENTENCES
                  ) -> Iterator[Translation]:
        """Translations of raw ``lines`` (tokenised here as the system tokenises, unless
        ``tokenized``), in input order, ``chunk`` lines at a time, each chunk read from
        ``lines`` only when the translations before it are taken (``chunk`` 1 answers each line
        of a stream as it comes); with ``k`` > 1 each has its n-best list; ``marks`` marks the
        passed-through words. ``progress`` hears after each chunk of a sized input."""
        started = time.monotonic()
        total = len(lines) if isinstance(lines, Sized) else None
        lines = iter(lines)
        done = 0
        while batch := list(itertools.islice(lines, chunk)):
            yield from self._translate_chunk(batch, tokenized, k, marks)
            done += len(batch)
            if progress is not None and total is not None and total > chunk:
                elapsed = time.monotonic() - started
                progress(f"translated {done:,} of {total:,} lines in {elapsed:.0f} s "
                         f"(about {elapsed / done * (total - done):.0f} s to go)")

    def _translate_chunk(self, chunk: Sequence[str], tokenized: bool, k: int,
                         marks: UnknownMarks | None) -> Iterator[Translation]:
        """The translations of one chunk of lines, decoded with the rules read for it."""
        lang = self.system.source_lang
        sources = list(chunk) if tokenized else [
            normalize(line, lang, lowercase=self.system.lowercase) for line in chunk]
        stats = RuleReadStats()
        rules = rules_for(self.grammar_path, sources, self.settings.span_limit, stats,
                          self.groups)
        self.stats.row_groups = stats.row_groups
        self.stats.row_groups_read += stats.row_groups_read
        self.stats.rows_checked += stats.rows_checked
        self.stats.rules += stats.rules
        features = self.features
        if self.oov_paraphrases is not None:
            rules = self.oov_paraphrases.augment(rules, sources)
            features = (*features, OOV_FEATURE)
        grammar = grammar_from_rules(rules, features)
        known = set(" ".join(pc.unique(rules["source"]).to_pylist()).split())
        del rules
        depth = rerank_depth(k, self.system.reranked_nbest(), self.reranking is not None)
        outputs = decode_corpus(sources, grammar, self.lm, self.weights, self.settings,
                                workers=self.workers, k=depth, rerank_lm=self.reranking)
        for line, source, hypotheses in zip(chunk, sources, outputs, strict=True):
            hypotheses = hypotheses[:k]
            words = source.split()
            cased = words if tokenized else cased_tokens(line, words, lang)
            candidates = match(grammar, tuple(words), self.settings.span_limit).oov
            best = hypotheses[0] if hypotheses else None
            positions = passed_through(words, candidates, best, known)
            output = render(best.text if best else "", words, cased, positions,
                            self.system.target_lang, self.recaser, marks)
            nbest = [Hypothesis(render(h.text, words, cased,
                                       passed_through(words, candidates, h, known),
                                       self.system.target_lang, None, marks).tokenized,
                                h.score, h.features) for h in hypotheses] if k > 1 else []
            yield Translation(output.tokenized, output.detokenized, output.recased,
                              source, [words[p] for p in positions], nbest)


@dataclass
class ParaphraseResult(Output):
    """One input's 1-best paraphrase, and why there is none when there is none."""

    source: str = ""
    reason: str | None = None
    """None when the 1-best differs from the input, else why it does not."""


def paraphrase_lines(paraphraser, sentences: Sequence[str], cased: Sequence[Sequence[str]],
                     lang: str, recaser: Recaser | None) -> list[ParaphraseResult]:
    """The 1-best paraphrases of tokenised ``sentences`` with one loaded
    :class:`circle.paraphrase.paraphraser.Paraphraser`, each with the reason where there is
    none; ``cased`` holds each sentence's tokens as written (:func:`render`)."""
    outputs = paraphraser.paraphrase(list(sentences), k=1)
    span_limit = paraphraser.settings.span_limit
    results = []
    for sentence, tokens, hypotheses in zip(sentences, cased, outputs, strict=True):
        best = hypotheses[0].text if hypotheses else sentence
        reason = None
        words = tuple(sentence.split())
        matches = match(paraphraser.grammar, words, span_limit)
        if not words:
            reason = "the line is empty"
        elif best == sentence:
            spans = sum(1 for found in matches.spans.values() if found)
            if not spans:
                reason = "no rule of the paraphrase grammar matches any of its phrases"
            else:
                reason = (f"rules match {spans} of its spans, but the best-scoring derivation "
                          "under the paraphraser's weights and language model rewrites "
                          "nothing (the sentence itself scores best)")
        positions = (passed_through(words, matches.oov, hypotheses[0], None) if hypotheses
                     else range(len(words)))
        output = render(best, words, tokens, positions, lang, recaser, None)
        results.append(ParaphraseResult(output.tokenized, output.detokenized, output.recased,
                                        sentence, reason))
    return results


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "0 %"


@dataclass
class UntranslatedWords:
    """The words left untranslated (passed through) in the lines translated so far, counted
    as they come (a stream's lines are not kept)."""

    words: Counter = field(default_factory=Counter)
    input_words: int = 0
    lines: int = 0
    """Lines with an untranslated word."""

    def add(self, translation: Translation) -> None:
        self.words.update(translation.untranslated)
        self.input_words += len(translation.source.split())
        self.lines += bool(translation.untranslated)

    def summary(self, limit: int = 20) -> str:
        """A one-line report of the untranslated (passed-through) words."""
        count = sum(self.words.values())
        if not count:
            return f"every one of the {self.input_words:,} input words was translated"
        shown = ", ".join(f"{word} ({n})" if n > 1 else word
                          for word, n in self.words.most_common(limit))
        more = f", and {len(self.words) - limit} more" if len(self.words) > limit else ""
        return (f"{count:,} of {self.input_words:,} input words "
                f"({percent(count, self.input_words)}) in {self.lines:,} line(s) left "
                f"untranslated (no rule translates them; copied as they are): {shown}{more}")


__all__ = ["Experiment", "Output", "ParaphraseResult", "Recaser", "Translation", "Translator",
           "UnknownMarks", "UntranslatedWords", "best_tuned_run", "paraphrase_lines",
           "project_root", "render", "results_directory"]
