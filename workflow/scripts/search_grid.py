from circle.grid_search import PointRule, search_grid
from circle.jobs import start_job

provenance = start_job(snakemake)
search_grid(snakemake.input.sweep, snakemake.input.rows,
            PointRule(snakemake.params.min_ref_move, snakemake.params.min_mt_move),
            snakemake.output.points, snakemake.output.choice, provenance)
