"""What reranking n-best lists with the reranking LM (lm.rerank_nbest, circle.decoder.rerank)
costs per decode: CPU seconds to load the LM, and per n-best list and per hypothesis to score
and reorder the lists of a decode stage table.

    python bench/nbest_rerank.py \\
        --nbest results/default/decode/untuned-translation/tune.nbest.parquet \\
        --lm results/default/lm/5gram.binary [--repeat 3]

``--nbest`` is an ``NBEST`` table (rule gather_nbest), ``--lm`` a KenLM binary (rule
estimate_lm, order lm.reranking_order). ``--estimate TABLE`` instead estimates a 5-gram into a
temporary directory from the ``target`` column of a tokenised bitext table (e.g.
results/default/tokenized/train.parquet) when the experiment has not built its own yet; its
size, and so its cost, is that of the pipeline's model on the same text. CPU time is the
process's (time.process_time), the best of ``--repeat`` passes; the machine's other load
shows in the wall time only.
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

from circle.core.schemas import BITEXT
from circle.core.tables import read_metadata, read_table
from circle.decoder.nbest import NBEST, Hypothesis
from circle.decoder.rerank import NBestReranker
from circle.lm import estimate_lm, write_text


def nbest_lists(path: Path) -> list[list[Hypothesis]]:
    """The table's lists, each in rank order."""
    names = json.loads(read_metadata(path)["feature_names"])
    frame = read_table(path, NBEST, columns=["segment_id", "rank", "hypothesis", "score",
                                             "features"])
    return [[Hypothesis(text, score, dict(zip(names, values.tolist(), strict=True)))
             for text, score, values in zip(group["hypothesis"], group["score"],
                                            group["features"], strict=True)]
            for _, group in frame.sort_values(["segment_id", "rank"]).groupby(
                "segment_id", sort=False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nbest", type=Path, required=True)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--lm", type=Path)
    source.add_argument("--estimate", type=Path, metavar="TABLE")
    parser.add_argument("--order", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    lists = nbest_lists(args.nbest)
    hypotheses = sum(len(hs) for hs in lists)
    with tempfile.TemporaryDirectory() as scratch:
        lm_path = args.lm
        if lm_path is None:
            text = Path(scratch) / "text.txt"
            write_text(read_table(args.estimate, BITEXT, columns=["target"])["target"], text)
            lm_path = Path(scratch) / "lm.binary"
            estimate_lm([text], args.order, lm_path, discount_fallback=False, memory="1G")
        started = time.process_time()
        reranker = NBestReranker(lm_path, 1.0)
        load = time.process_time() - started
        megabytes = Path(lm_path).stat().st_size / 1e6
        passes = []
        for _ in range(args.repeat):
            started, wall = time.process_time(), time.perf_counter()
            for hs in lists:
                reranker.rerank(hs)
            passes.append((time.process_time() - started, time.perf_counter() - wall))
    cpu, wall = min(passes)
    print(f"{args.nbest}: {len(lists)} n-best lists, {hypotheses} hypotheses "
          f"({hypotheses / len(lists):.1f} a list); LM {lm_path.name} of order "
          f"{reranker.lm.order}, {megabytes:.1f} MB "
          f"on disk, loaded in {1e3 * load:.1f} ms of CPU")
    print(f"reranking: {1e3 * cpu:.1f} ms of CPU for the table (best of {args.repeat}; wall "
          f"{1e3 * wall:.1f} ms), {1e3 * cpu / len(lists):.3f} ms a list, "
          f"{1e6 * cpu / hypotheses:.1f} µs a hypothesis")


if __name__ == "__main__":
    main()
