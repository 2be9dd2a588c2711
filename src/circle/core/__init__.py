"""What every stage uses: the table schemas, Parquet I/O with provenance, job set-up, progress
lines and the external programs (KenLM, eflomal)."""
