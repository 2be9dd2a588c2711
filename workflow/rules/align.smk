# Word alignment of the tokenised training bitext: eflomal both ways, symmetrised in circle.align.


rule align_corpus:
    input:
        bitext="results/{experiment}/tokenized/train.parquet",
    output:
        alignment="results/{experiment}/align/eflomal.parquet",
    log:
        "logs/{experiment}/align_corpus.log",
    benchmark:
        "benchmarks/{experiment}/align_corpus.tsv"
    params:
        options=config["alignment"],
    threads: 2
    resources:
        mem_mb=2000,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/align_corpus.py"


rule aligned_corpus:
    """Named target: the tokenised training bitext and its (possibly frozen) alignment."""
    input:
        f"results/{EXPERIMENT}/tokenized/train.parquet",
        alignment_source,
