from circle.core.jobs import start_job
from circle.decoder import DecoderSettings
from circle.paraphrase.untargeted import paraphrase_references

provenance = start_job(snakemake)
paraphrase_references(snakemake.input.evalset, snakemake.input.grammar, snakemake.input.lm,
                      snakemake.input.weights, snakemake.params.k,
                      DecoderSettings.from_config(snakemake.params.settings), snakemake.threads,
                      snakemake.output.nbest, provenance, snakemake.params.reference,
                      snakemake.input.get("rerank_lm"))
