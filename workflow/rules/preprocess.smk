# Tokenisation and lowercasing of every split.


rule tokenize_corpus:
    input:
        table="results/{experiment}/corpus/{split}.parquet",
    output:
        table="results/{experiment}/tokenized/{split}.parquet",
    log:
        "logs/{experiment}/tokenize_corpus/{split}.log",
    benchmark:
        "benchmarks/{experiment}/tokenize_corpus/{split}.tsv"
    params:
        options=config["preprocess"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/tokenize_corpus.py"
