from circle.core.jobs import start_job
from circle.experiments.run_evaluation import evaluate_runs

provenance = start_job(snakemake)
runs = list(zip(snakemake.params.runs, snakemake.params.seeds, snakemake.input.nbest,
                snakemake.input.logs, strict=True))
evaluate_runs(snakemake.wildcards.experiment, snakemake.input.test, runs,
              snakemake.params.samples, snakemake.params.seed, snakemake.output.table,
              provenance, conditions_path=snakemake.output.conditions,
              shuffles=snakemake.params.shuffles,
              significance_level=snakemake.params.significance_level,
              lowercased=snakemake.params.lowercased, untuned=snakemake.input.untuned,
              untuned_seed=snakemake.params.seed, lang=snakemake.params.lang)
