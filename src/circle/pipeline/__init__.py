"""What faces Snakemake: the configuration's checks when the workflow is built and each job's
memory and runtime requests."""
