from circle.core.jobs import start_job
from circle.lm import prepare_lm_text

start_job(snakemake)
prepare_lm_text(list(snakemake.input.train), list(snakemake.input.evalsets),
                list(snakemake.input.get("extra", [])), snakemake.output.text,
                preprocess=snakemake.params.preprocess,
                max_line_chars=snakemake.params.max_line_chars,
                leak_min_words=snakemake.params.leak_min_words,
                on_leak=snakemake.params.leaked_lines)
