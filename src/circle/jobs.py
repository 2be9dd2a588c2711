"""What every Snakemake script wrapper needs: logging into the rule's log, and provenance."""

from __future__ import annotations

import logging
import sys
from typing import Any

from circle.tables import provenance


def start_job(snakemake: Any) -> dict[str, str]:
    """Send logging and stderr to the rule's log file; return the job's table provenance."""
    log = open(snakemake.log[0], "w", buffering=1)
    sys.stderr = log
    logging.basicConfig(stream=log, level=logging.INFO, force=True,
                        format="%(asctime)s %(levelname)s %(message)s")
    return provenance(snakemake.rule, snakemake.config, wildcards=dict(snakemake.wildcards))
