"""Load a grammar table as every decoding job does and print what it cost.

    python bench/grammar_load.py results/default/paraphrase/bias0.parquet

Prints the rules, the wall time of ``load_grammar``, the resident memory the loaded grammar
holds (growth of this process's RSS), the process's peak RSS (the interpreter and libraries
included: about 110 MiB before loading) and a digest of every array and index the decoder
reads, so that two versions of the loader can be checked to build the same grammar.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import time

import numpy as np
import psutil

from circle.decoder import load_grammar


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("grammar", help="a grammar table (bilingual, filtered or paraphrase)")
    args = parser.parse_args()
    process = psutil.Process()
    before = process.memory_info().rss
    started = time.perf_counter()
    grammar = load_grammar(args.grammar)
    wall = time.perf_counter() - started
    held = process.memory_info().rss - before
    digest = hashlib.sha256()
    for array in (grammar.features(slice(None)), grammar.rows(np.arange(grammar.num_sources))[0],
                  grammar.target_ids, grammar.target_offsets, grammar.terminal_counts):
        digest.update(np.ascontiguousarray(array).tobytes())
    digest.update(repr((grammar.trie, grammar.vocabulary)).encode())
    print(f"{len(grammar)} rules  load {wall:.1f} s  holds {held / 2**20:,.0f} MiB  "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB  "
          f"digest {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
