"""Compare two runs' results directories table by table: did a change alter any output?

For every Parquet table both directories hold (same relative path), compares the data (columns,
types, values, row order) and, apart from it, the provenance metadata (which names the config
hash and package versions, so it may differ where the data does not); text outputs (weights,
reference streams, CSV and Markdown pages) and language models are compared byte for byte.
Prints one line per difference and a count per kind; exit status 1 if any data differ. Paths
matching --skip (substrings) are left out, e.g. outputs that only one of the two commits writes.

Usage: python bench/compare_results.py RESULTS_A RESULTS_B [--skip report/ targeted/cache]
"""

import argparse
import sys
from pathlib import Path

import pyarrow.parquet as pq

BYTES = {".txt", ".csv", ".md", ".yaml", ".arpa", ".binary"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--skip", nargs="*", default=[])
    args = parser.parse_args()

    def files(root: Path) -> set[str]:
        return {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()
                and (path.suffix == ".parquet" or path.suffix in BYTES)
                and not any(skip in str(path.relative_to(root)) for skip in args.skip)}

    first, second = files(args.first), files(args.second)
    counts = {"same data": 0, "same bytes": 0, "data differ": 0, "bytes differ": 0,
              "metadata differ only": 0}
    for name in sorted(first & second):
        a, b = args.first / name, args.second / name
        if name.endswith(".parquet"):
            table_a, table_b = pq.read_table(a), pq.read_table(b)
            if not table_a.replace_schema_metadata().equals(table_b.replace_schema_metadata()):
                counts["data differ"] += 1
                print(f"data differ: {name} ({table_a.num_rows} vs {table_b.num_rows} rows)")
                continue
            counts["same data"] += 1
            meta_a, meta_b = (table.schema.metadata or {} for table in (table_a, table_b))
            changed = sorted(key.decode() for key in set(meta_a) | set(meta_b)
                             if meta_a.get(key) != meta_b.get(key) and b"pandas" not in key)
            if changed:
                counts["metadata differ only"] += 1
                print(f"metadata differ (data equal): {name}: {', '.join(changed)}")
        elif a.read_bytes() == b.read_bytes():
            counts["same bytes"] += 1
        else:
            counts["bytes differ"] += 1
            print(f"bytes differ: {name}")
    for name in sorted(first ^ second):
        print(f"only in {args.first if name in first else args.second}: {name}")
    print(", ".join(f"{count} {kind}" for kind, count in counts.items())
          + f"; {len(first - second)} only in the first, {len(second - first)} only in the second")
    return 1 if counts["data differ"] or counts["bytes differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
