from circle.core.jobs import start_job
from circle.paraphrase.grid_search import PointRule, search_grid

provenance = start_job(snakemake)
search_grid(snakemake.input.sweep, snakemake.input.rows,
            PointRule(snakemake.params.min_ref_move, snakemake.params.min_mt_move),
            snakemake.output.points, snakemake.output.choice, provenance)
