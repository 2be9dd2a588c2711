# The two commands of the README. Both bootstrap what they need (envs/setup.sh) and are idempotent.
CORES ?= 2
SNAKEMAKE := .venv/bin/snakemake

.PHONY: help run test setup setup-bible ladder powered

run: setup
	$(SNAKEMAKE) --cores $(CORES)

test: setup-bible
	.venv/bin/python -m pytest --numprocesses $(CORES) --dist loadscope --no-loadscope-reorder

# The ladder of paraphrasers (docs/results.md): the default experiment, the paraphrasers tuned on
# the 5 % bias with and without φ_ident, and the pivot rungs (config/ladder-*.yaml), then the
# ladder's page, results/ladder/ladder.md. About fourteen hours on two cores; each run resumes
# where it stopped.
LADDER_EXPERIMENTS := paraphraser-bias05 identity-feature
LADDER_RUNGS := ladder-es-english ladder-es-english-shared-lms ladder-es-english-identity \
	ladder-languages-kjv ladder-languages-english ladder-languages-english-shared-lms
# The most adequate rung that rewrites R (by the tune set's reference quality) also runs 1H+kT and
# the grid search.
LADDER_TARGETED := ladder-languages-english

ladder: setup
	$(SNAKEMAKE) --cores $(CORES)
	for experiment in $(LADDER_EXPERIMENTS); do \
	  $(SNAKEMAKE) --cores $(CORES) --configfile config/config.yaml config/$$experiment.yaml \
	    || exit 1; done
	for rung in $(LADDER_RUNGS); do \
	  targets="reference_sparsity reference_quality"; \
	  case " $(LADDER_TARGETED) " in *" $$rung "*) targets="$$targets targeted_tuning grid_search";; esac; \
	  $(SNAKEMAKE) --cores $(CORES) --configfile config/config.yaml config/$$rung.yaml \
	    -- $$targets || exit 1; done
	.venv/bin/circle ladder results/default $(addprefix results/,$(LADDER_EXPERIMENTS) $(LADDER_RUNGS))

# The powered experiment (docs/results.md, "The powered experiment: decision rules, fixed before
# the run"), on config/paper.yaml's whole sets: 1H, 2H, 1H+1P and the dose-response's controls,
# then 1H+1P with the ladder's most adequate rung and with the φ_ident copier, the last to drop
# if the design does not fit. Run its pilot first (config/powered-pilot.yaml); each run resumes
# where it stopped. On one machine each set is decoded in one job (config/one-machine.yaml,
# last); on a cluster leave it out (docs/results.md gives the SLURM commands). The verdict,
# read by the rules, is written to results/verdict/.
POWERED := --configfile config/paper.yaml config/powered.yaml

powered: setup
	$(SNAKEMAKE) --cores $(CORES) $(POWERED) config/one-machine.yaml \
	  -- reference_sparsity dose_response
	$(SNAKEMAKE) --cores $(CORES) $(POWERED) config/ladder-languages-english.yaml \
	  config/powered-languages-english.yaml config/one-machine.yaml -- reference_sparsity
	$(SNAKEMAKE) --cores $(CORES) $(POWERED) config/identity-feature.yaml \
	  config/powered-identity.yaml config/one-machine.yaml -- reference_sparsity
	.venv/bin/circle verdict results/powered results/powered-languages-english \
	  results/powered-identity

setup:
	bash envs/setup.sh

setup-bible:
	bash envs/setup.sh --bible

help:
	@echo "make run          the default experiment, its report and summary (results/default/)"
	@echo "make test         the test suite (tiny data; CORES=$(CORES) workers)"
	@echo "make ladder       the ladder of paraphrasers (docs/results.md; about 14 h on 2 cores)"
	@echo "make powered      the powered experiment on config/paper.yaml's sets"
	@echo "make setup        the environment (.venv) the other targets use"
	@echo "make setup-bible  the environment and the Bible corpora the tests need"
