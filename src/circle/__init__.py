"""circle: Madnani's Circle of Meaning as a reproducible Snakemake pipeline."""

__version__ = "0.1.0"
