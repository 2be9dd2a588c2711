# KenLM language models on the English training side (plus optional extra monolingual text).


rule prepare_lm_text:
    """Collect the tokenised LM text and refuse it if it contains evaluation references."""
    input:
        train=[TOKENIZED_TABLE.format(experiment="{experiment}", split="train")],
        evalsets=expand(TOKENIZED_TABLE, split=EVAL_SETS, allow_missing=True),
        extra=config["lm"]["extra_text"],
    output:
        text=temp("results/{experiment}/lm/text.txt"),
    log:
        "logs/{experiment}/prepare_lm_text.log",
    params:
        preprocess=config["preprocess"],
        max_line_chars=config["validation"]["max_line_chars"],
        leak_min_words=config["lm"]["leak_min_words"],
        leaked_lines=config["lm"]["leaked_lines"],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/prepare_lm_text.py"


rule estimate_lm:
    input:
        text="results/{experiment}/lm/text.txt",
    output:
        binary=LM_BINARY,
    log:
        "logs/{experiment}/estimate_lm/{order}gram.log",
    benchmark:
        "benchmarks/{experiment}/estimate_lm/{order}gram.tsv"
    params:
        discount_fallback=config["lm"]["discount_fallback"],
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/estimate_lm.py"


rule prepare_paraphraser_lm_text:
    """The paraphraser's own LM text (paraphrase.language_models: pivots): the English side of
    its pivot bitexts, each English version once, refused if it contains evaluation references."""
    input:
        train=paraphraser_lm_bitexts,
        evalsets=expand(TOKENIZED_TABLE, split=EVAL_SETS, allow_missing=True),
    output:
        text=temp("results/{experiment}/paraphrase/lm/text.txt"),
    log:
        "logs/{experiment}/prepare_paraphraser_lm_text.log",
    params:
        preprocess=config["preprocess"],
        max_line_chars=config["validation"]["max_line_chars"],
        leak_min_words=config["lm"]["leak_min_words"],
        leaked_lines=config["lm"]["leaked_lines"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/prepare_lm_text.py"


rule estimate_paraphraser_lm:
    """The paraphraser's own decoding and reranking LMs (paraphrase.language_models: pivots)."""
    input:
        text="results/{experiment}/paraphrase/lm/text.txt",
    output:
        binary=PARAPHRASER_LM_BINARY,
    log:
        "logs/{experiment}/estimate_paraphraser_lm/{order}gram.log",
    benchmark:
        "benchmarks/{experiment}/estimate_paraphraser_lm/{order}gram.tsv"
    params:
        discount_fallback=config["lm"]["discount_fallback"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/estimate_lm.py"


rule language_models:
    """Named target: the decoding and reranking LMs of the experiment (and the paraphraser's,
    with paraphrase.language_models: pivots)."""
    input:
        EFFECTIVE_CONFIG,
        expand(LM_BINARY, experiment=EXPERIMENT, order=lm_orders()),
        [paraphraser_lm(EXPERIMENT, order) for order in lm_orders()],
