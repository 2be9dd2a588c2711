# The two commands of the README. Both bootstrap what they need (envs/setup.sh) and are idempotent.
CORES ?= 2
SNAKEMAKE := .venv/bin/snakemake

.PHONY: run test setup setup-bible

run: setup
	$(SNAKEMAKE) --cores $(CORES)

test: setup-bible
	.venv/bin/python -m pytest --numprocesses $(CORES) --dist loadscope --no-loadscope-reorder

setup:
	bash envs/setup.sh

setup-bible:
	bash envs/setup.sh --bible
