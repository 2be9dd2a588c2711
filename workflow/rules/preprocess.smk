# Tokenisation and lowercasing of every split, and of the training segments that
# corpus.train_segments leaves out of the bitext.


rule tokenize_corpus:
    input:
        table=CORPUS_TABLE,
    output:
        table=TOKENIZED_TABLE,
    log:
        "logs/{experiment}/tokenize_corpus/{split}.log",
    benchmark:
        "benchmarks/{experiment}/tokenize_corpus/{split}.tsv"
    params:
        options=config["preprocess"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
        split="|".join([*SPLITS, UNUSED_TRAINING]),
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/tokenize_corpus.py"
