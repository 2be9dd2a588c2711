"""Translating and paraphrasing new text with a finished experiment (``circle translate``,
``circle paraphrase``).

An :class:`Experiment` is one results directory, ``results/<experiment>``, found from the
project root (the checkout with the Snakefile), not from the working directory; its effective
config (``config.yaml``) gives the languages, the lowercasing and the decoding LM's order.

New text needs the rules of the experiment's full bilingual grammar that can apply to it
(tens of millions on the default experiment: loading them all does not fit in memory).
:func:`rules_for` reads them in bounded memory: the grammar table is sorted by source side and
each of its Parquet row groups records the least and greatest source side it holds, and a rule
can only match a sentence if the first terminal of its source side is a word of the sentence,
so only the row groups holding the source sides that begin with an input word (or with a
nonterminal and then an input word) are read, one at a time, and within them only the rows in
those key ranges are checked exactly (:meth:`circle.grammar.filter.SentenceIndex.matches`, the
test the workflow's ``filter_grammar`` applies). Input is translated in chunks of
:data:`CHUNK_SENTENCES` sentences, each with its own rules, so memory stays bounded for long
inputs too.

Words that no rule translates on their own are passed through by the decoder (its ``oov``
feature); :class:`Translation` lists them. With the weights of a kH_oov run (which weight the
paraphrase feature ``log_paraphrase_similarity``), the OOV phrases of each chunk first borrow
rules from their distributional paraphrases (:class:`OovParaphrases`), as the workflow's
augmented tune and test grammars do.

Where the experiment lowercases, a :class:`Recaser` restores case in the detokenised output:
it capitalises the first letter of each sentence and gives each word the spelling it has most
often in the training target side (raw text) away from the start of a line, when that spelling
is not all lowercase ("lord" becomes "LORD" only if the training text writes it so more often
than otherwise). It does not model context (a word capitalised in some uses only takes its
most frequent form everywhere), does not capitalise after a sentence end inside a line, and
leaves words unseen in training as the decoder wrote them.
"""

from __future__ import annotations

import bisect
import logging
import os
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

from circle.core.schemas import BITEXT, EVALSET
from circle.core.tables import read_metadata
from circle.corpus.preprocess import detokenize, normalize
from circle.decoder import DecoderSettings, Grammar, LanguageModel, decode_corpus, read_weights
from circle.decoder.chart import match
from circle.distributional import DistributionalSettings, MonolingualCorpus
from circle.grammar.filter import SentenceIndex, SourcePattern
from circle.grammar.oov_paraphrase import FEATURE as OOV_FEATURE
from circle.grammar.oov_paraphrase import borrowed_for, one_word_sources, source_texts

log = logging.getLogger(__name__)

PROJECT_ENV = "CIRCLE_PROJECT"
"""Environment variable naming the project root (the directory with the Snakefile)."""

CHUNK_SENTENCES = 200
"""Sentences translated with one set of rules read from the grammar."""

LAST_KEY = "\U0010ffff"


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
    return root / "results" / (experiment or "default")


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


@dataclass
class Experiment:
    """A finished experiment's results directory and its effective config."""

    results: Path
    config: dict = field(default_factory=dict)

    @classmethod
    def at(cls, results: str | os.PathLike) -> Experiment:
        results = Path(results)
        path = results / "config.yaml"
        config = yaml.safe_load(path.read_text()) if path.is_file() else {}
        return cls(results, config or {})

    @property
    def preprocess(self) -> dict:
        return self.config.get("preprocess", {})

    @property
    def source_lang(self) -> str:
        return self.preprocess.get("source_lang", "es")

    @property
    def target_lang(self) -> str:
        return self.preprocess.get("target_lang", "en")

    @property
    def lowercase(self) -> bool:
        return bool(self.preprocess.get("lowercase", True))

    @property
    def lm(self) -> Path:
        order = self.config.get("lm", {}).get("decoding_order", 3)
        return self.results / "lm" / f"{order}gram.binary"

    @property
    def paraphraser_lm(self) -> Path:
        """The LM the experiment's paraphraser decodes with: its own with
        ``paraphrase.language_models: pivots`` (:mod:`circle.corpus.pivots`), else :attr:`lm`."""
        if self.config.get("paraphrase", {}).get("language_models", "shared") != "pivots":
            return self.lm
        order = self.config.get("lm", {}).get("decoding_order", 3)
        return self.results / "paraphrase" / "lm" / f"{order}gram.binary"

    @property
    def grammar(self) -> Path:
        return self.results / "grammar" / "bilingual.parquet"

    def decoder_settings(self, **overrides) -> DecoderSettings:
        """The experiment's decoder settings (config ``decoder``), k = 1 unless overridden."""
        return DecoderSettings.from_config({**self.config.get("decoder", {}), "k": 1},
                                           **overrides)

    def translation_weights(self, given: str | None) -> tuple[Path, str]:
        """The weight file to translate with, and a sentence saying which and why: ``given``
        (a run name such as '1H.rep0', i.e. weights/<run>.txt, or a file), else the 1H
        replicate with the best tune score, else the untuned weights (with a warning)."""
        weights = self.results / "weights"
        if given is not None:
            named = weights / f"{given}.txt"
            if named.is_file():
                return named, f"the weights of run {given}, {named}"
            path = Path(given)
            if path.is_file():
                return path, f"the weights {path}"
            runs = sorted(p.stem for p in weights.glob("*.txt")) if weights.is_dir() else []
            raise FileNotFoundError(f"--weights {given}: neither a run of {self.results} "
                                    f"({named} does not exist; runs: {', '.join(runs) or 'none'})"
                                    " nor a weight file")
        best = best_tuned_run(self.results, "1H")
        if best is not None:
            run, metric, score, count = best
            return weights / f"{run}.txt", (
                f"the weights of {run}, {weights / f'{run}.txt'}: the best tune "
                f"{metric.upper()} ({100 * score:.2f}) of the {count} tuned 1H replicate(s) "
                "(choose another with --weights RUN)")
        untuned = weights / "untuned-translation.txt"
        return untuned, (f"the UNTUNED weights {untuned}: warning, no 1H run of "
                         f"{self.results} is tuned yet (run the workflow, or give --weights)")


def best_tuned_run(results: Path, condition: str) -> tuple[str, str, float, int] | None:
    """(run, metric, tune score, runs compared) of the replicate of ``condition`` whose tuning
    log returned the best decoded tune score and whose weights exist; None if there is none."""
    from circle.core.schemas import TUNING_LOG
    from circle.core.tables import read_table
    from circle.tune.metrics import get_metric

    found = []
    for log_path in sorted((results / "tune").glob(f"{condition}.rep*.parquet")):
        run = log_path.name.removesuffix(".parquet")
        if not (results / "weights" / f"{run}.txt").is_file():
            continue
        table = read_table(log_path, TUNING_LOG)
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


def key_ranges(sentences: Iterable[str], max_leading_nonterminals: int = 2
               ) -> list[tuple[str, str]]:
    """Sorted, merged ranges [low, high] of the source sides that can match ``sentences``: a
    source side begins with up to ``max_leading_nonterminals`` nonterminals and then a word of
    the input (the rule's first terminal)."""
    words = {word for sentence in sentences for word in sentence.split()}
    prefixes = [" ".join(f"[X,{k}]" for k in range(1, count + 1))
                for count in range(max_leading_nonterminals + 1)]
    ranges = sorted((f"{prefix} {word}".lstrip(), f"{prefix} {word} {LAST_KEY}".lstrip())
                    for prefix in prefixes for word in words)
    merged: list[tuple[str, str]] = []
    for low, high in ranges:
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return merged


def _overlaps(ranges: Sequence[tuple[str, str]], low: str, high: str) -> bool:
    """Whether [low, high] meets one of the sorted, disjoint ``ranges``."""
    at = bisect.bisect_left(ranges, (low,))
    if at > 0 and ranges[at - 1][1] >= low:
        return True
    return at < len(ranges) and ranges[at][0] <= high


@dataclass
class RuleReadStats:
    row_groups: int = 0
    row_groups_read: int = 0
    rows_checked: int = 0
    rules: int = 0


def rules_for(grammar_path: str | os.PathLike, sentences: Sequence[str], span_limit: int = 10,
              stats: RuleReadStats | None = None) -> pa.Table:
    """The rules of a grammar table (sorted by source side, as the workflow writes them) that
    can apply to ``sentences`` (tokenised), read in bounded memory (module doc)."""
    parquet = pq.ParquetFile(grammar_path)
    names = parquet.schema_arrow.names
    source_column = names.index("source")
    ranges = key_ranges(sentences)
    index = SentenceIndex(sentences, span_limit)
    vocabulary = pa.array(sorted({word for sentence in sentences for word in sentence.split()}
                                 | {f"[X,{k}]" for k in range(1, 10)}), pa.string())
    verdicts: dict[str, bool] = {}
    stats = stats if stats is not None else RuleReadStats()
    stats.row_groups = parquet.metadata.num_row_groups
    kept: list[pa.Table] = []
    previous_high = None
    for group in range(parquet.metadata.num_row_groups):
        column = parquet.metadata.row_group(group).column(source_column).statistics
        bounded = column is not None and column.has_min_max
        if bounded:
            if previous_high is not None and column.min < previous_high:
                raise ValueError(f"{grammar_path}: the rules are not sorted by source side")
            previous_high = column.max
            if not _overlaps(ranges, column.min, column.max):
                continue
        stats.row_groups_read += 1
        sources = parquet.read_row_group(group, columns=["source"])["source"]
        values = sources.to_numpy(zero_copy_only=False)
        if bounded:  # sorted: the rows in the key ranges, by binary search
            found = [np.arange(np.searchsorted(values, low, side="left"),
                               np.searchsorted(values, high, side="right"))
                     for low, high in ranges]
            rows = np.concatenate(found) if found else np.empty(0, dtype=np.int64)
        else:  # no statistics to rely on: every row is checked
            rows = np.arange(len(values))
        if not len(rows):
            continue
        stats.rows_checked += len(rows)
        selected = sources.take(pa.array(rows))
        matching = _matching_sources(pc.unique(selected), vocabulary, index, verdicts)
        if len(matching):
            keep = np.asarray(pc.is_in(selected, value_set=matching).to_numpy(
                zero_copy_only=False), dtype=bool)
            table = parquet.read_row_group(group)
            kept.append(table.take(pa.array(rows[keep])))
    schema = parquet.schema_arrow
    result = pa.concat_tables(kept) if kept else schema.empty_table()
    stats.rules = result.num_rows
    return result


def _matching_sources(unique: pa.Array, vocabulary: pa.Array, index: SentenceIndex,
                      verdicts: dict[str, bool]) -> pa.Array:
    """The source sides among ``unique`` that match an input sentence: those with a symbol that
    is neither an input word nor a nonterminal are dropped at once (Arrow), the rest get the
    exact check (``verdicts`` caches it across row groups)."""
    symbols = pc.split_pattern(unique, " ")
    outside = pc.invert(pc.is_in(pc.list_flatten(symbols), value_set=vocabulary))
    parents = pc.list_parent_indices(symbols).to_numpy()
    bad = np.bincount(parents[np.asarray(outside.to_numpy(zero_copy_only=False), dtype=bool)],
                      minlength=len(unique))
    kept = []
    for source in unique.filter(pa.array(bad == 0)).to_pylist():
        verdict = verdicts.get(source)
        if verdict is None:
            verdict = verdicts[source] = index.matches(SourcePattern.parse(source))
        if verdict:
            kept.append(source)
    return pa.array(kept, unique.type)


def grammar_from_rules(rules: pa.Table, feature_names: Sequence[str]) -> Grammar:
    """A decoder :class:`Grammar` of a table of rules with the given feature columns."""
    values = np.column_stack([rules[name].to_numpy() for name in feature_names]) \
        if rules.num_rows else np.empty((0, len(feature_names)))
    def strings(name: str) -> pa.Array:
        return rules[name].combine_chunks().cast(pa.large_string())

    return Grammar(strings("source"), strings("target"), values, feature_names)


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
    def for_experiment(cls, experiment: Experiment) -> Recaser:
        """From the raw target side of the experiment's training corpus
        (``corpus/train.parquet``); an empty recaser (first letters only) without it."""
        path = experiment.results / "corpus" / "train.parquet"
        if not path.is_file():
            log.warning("%s not found: recasing capitalises first letters only", path)
            return cls({})
        targets = pq.read_table(path, columns=["target"])["target"].to_pylist()
        return cls.from_text(targets)

    def recase(self, text: str) -> str:
        recased = WORD.sub(lambda found: self.forms.get(found.group().lower(), found.group()),
                           text)
        for position, character in enumerate(recased):
            if character.isalpha():
                return recased[:position] + character.upper() + recased[position + 1:]
        return recased


@dataclass
class Translation:
    """One input line's translation."""

    source: str
    """The input, tokenised (and lowercased where the experiment lowercases)."""
    tokenized: str
    detokenized: str
    recased: str | None
    """None where the experiment keeps case."""
    untranslated: list[str]
    """The words no rule translates on their own, which the decoder copied (pass-through)."""


def passed_through(grammar: Grammar, words: Sequence[str], hypotheses: Sequence,
                   span_limit: int, known: set[str]) -> list[str]:
    """The words the 1-best copies untranslated, as many as its ``oov`` feature counts: of the
    words no rule translates on their own, first those in no rule at all (not in ``known``,
    the source words of the rules), then those found in the output (a word with rules only in
    larger phrases may be translated inside one)."""
    if not words or not hypotheses:
        return list(words)
    count = round(hypotheses[0].features.get("oov", 0.0))
    candidates = [words[position] for position in match(grammar, tuple(words), span_limit).oov]
    output = Counter(hypotheses[0].text.split())
    unknown = [word for word in candidates if word not in known]
    copied = []
    for word in candidates:
        if word in known and output[word] > 0:
            output[word] -= 1
            copied.append(word)
    rest = [word for word in candidates if word in known and word not in copied]
    return (unknown + copied + rest)[:count]


Progress = Callable[[str], None]


class OovParaphrases:
    """New text's OOV phrases translated through their distributional paraphrases (Marton,
    Callison-Burch & Resnik 2009; :mod:`circle.grammar.oov_paraphrase`), as the workflow's
    augmented grammars are for the tune and test sets: the monolingual source text is the
    experiment's tokenised splits (and the training verses a sample left out), indexed once
    with the experiment's ``oov_paraphrase`` settings."""

    def __init__(self, experiment: Experiment, bilingual: Path):
        tables = [path for path in sorted((experiment.results / "tokenized").glob("*.parquet"))
                  if read_metadata(path).get("schema") in (BITEXT.name, EVALSET.name)]
        if not tables:
            raise FileNotFoundError(f"{experiment.results / 'tokenized'}: no tokenised splits, "
                                    "the monolingual text of the OOV paraphrases")
        settings = DistributionalSettings.from_config(
            experiment.config.get("oov_paraphrase", {}), int(experiment.config.get("seed", 13)))
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
    """An experiment's decoder for new text: its language model loaded once, the rules read
    per chunk of input (:func:`rules_for`), the given weights."""

    def __init__(self, experiment: Experiment, weights: str | os.PathLike,
                 settings: DecoderSettings | None = None, workers: int = 1,
                 grammar: str | os.PathLike | None = None, lm: str | os.PathLike | None = None,
                 recase: bool | None = None):
        self.experiment = experiment
        self.grammar_path = Path(grammar) if grammar is not None else experiment.grammar
        if not self.grammar_path.is_file():
            raise FileNotFoundError(f"{self.grammar_path}: the experiment's bilingual grammar "
                                    "does not exist (snakemake ... grammars builds it)")
        from circle.decoder import grammar_features

        self.features = grammar_features(self.grammar_path)
        self.lm = LanguageModel(lm if lm is not None else experiment.lm)
        self.weights = read_weights(weights)
        self.oov_paraphrases = (OovParaphrases(experiment, self.grammar_path)
                                if OOV_FEATURE in self.weights else None)
        """Weights of a kH_oov run (they weight the paraphrase feature): each chunk's OOV
        phrases borrow rules from their distributional paraphrases, as in the workflow."""
        self.settings = settings or experiment.decoder_settings()
        self.workers = workers
        wanted = experiment.lowercase if recase is None else recase
        self.recaser = Recaser.for_experiment(experiment) if wanted else None
        self.stats = RuleReadStats()

    def translate(self, lines: Sequence[str], tokenized: bool = False,
                  progress: Progress | None = None) -> Iterator[Translation]:
        """Translations of raw ``lines`` (tokenised here as the experiment tokenises, unless
        ``tokenized``), in input order, chunk by chunk."""
        started = time.monotonic()
        lang = self.experiment.source_lang
        for first in range(0, len(lines), CHUNK_SENTENCES):
            chunk = lines[first:first + CHUNK_SENTENCES]
            sources = list(chunk) if tokenized else [
                normalize(line, lang, lowercase=self.experiment.lowercase) for line in chunk]
            stats = RuleReadStats()
            rules = rules_for(self.grammar_path, sources, self.settings.span_limit, stats)
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
            outputs = decode_corpus(sources, grammar, self.lm, self.weights, self.settings,
                                    workers=self.workers, k=1)
            for source, hypotheses in zip(sources, outputs, strict=True):
                words = tuple(source.split())
                tokens = hypotheses[0].text if hypotheses else ""
                plain = detokenize(tokens, self.experiment.target_lang)
                yield Translation(source, tokens, plain,
                                  self.recaser.recase(plain) if self.recaser else None,
                                  passed_through(grammar, words, hypotheses,
                                                 self.settings.span_limit, known))
            if progress is not None and len(lines) > CHUNK_SENTENCES:
                done = min(first + CHUNK_SENTENCES, len(lines))
                elapsed = time.monotonic() - started
                progress(f"translated {done:,} of {len(lines):,} lines in {elapsed:.0f} s "
                         f"(about {elapsed / done * (len(lines) - done):.0f} s to go)")


@dataclass
class ParaphraseResult:
    """One input's 1-best paraphrase, and why there is none when there is none."""

    source: str
    paraphrase: str
    reason: str | None
    """None when the 1-best differs from the input, else why it does not."""


def paraphrase_lines(paraphraser, sentences: Sequence[str]) -> list[ParaphraseResult]:
    """The 1-best paraphrases of tokenised ``sentences`` with one loaded
    :class:`circle.paraphrase.paraphraser.Paraphraser`, each with the reason where there is none."""
    outputs = paraphraser.paraphrase(list(sentences), k=1)
    results = []
    for sentence, hypotheses in zip(sentences, outputs, strict=True):
        best = hypotheses[0].text if hypotheses else sentence
        reason = None
        words = tuple(sentence.split())
        if not words:
            reason = "the line is empty"
        elif best == sentence:
            matches = match(paraphraser.grammar, words, paraphraser.settings.span_limit)
            spans = sum(1 for found in matches.spans.values() if found)
            if not spans:
                reason = "no rule of the paraphrase grammar matches any of its phrases"
            else:
                reason = (f"rules match {spans} of its spans, but the best-scoring derivation "
                          "under the paraphraser's weights and language model rewrites "
                          "nothing (the sentence itself scores best)")
        results.append(ParaphraseResult(sentence, best, reason))
    return results


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "0 %"


def untranslated_summary(translations: Sequence[Translation], limit: int = 20) -> str:
    """A one-line report of the untranslated (passed-through) words."""
    words = Counter(word for t in translations for word in t.untranslated)
    total = sum(len(t.source.split()) for t in translations)
    count = sum(words.values())
    lines = sum(1 for t in translations if t.untranslated)
    if not count:
        return f"every one of the {total:,} input words was translated"
    shown = ", ".join(f"{word} ({n})" if n > 1 else word
                      for word, n in words.most_common(limit))
    more = f", and {len(words) - limit} more" if len(words) > limit else ""
    return (f"{count:,} of {total:,} input words ({percent(count, total)}) in {lines:,} "
            f"line(s) left untranslated (no rule translates them; copied as they are): "
            f"{shown}{more}")


__all__ = ["Experiment", "ParaphraseResult", "Recaser", "Translation", "Translator",
           "best_tuned_run", "key_ranges", "paraphrase_lines", "project_root",
           "results_directory", "rules_for", "untranslated_summary"]
