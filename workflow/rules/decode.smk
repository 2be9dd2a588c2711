# Decoding evaluation sets with the SCFG decoder, in shards (scatter/gather). Logic in
# circle.decoder.sets.


rule write_initial_weights:
    """The untuned weights of the config, as a weight file (the start point of MERT); for
    translation_oov, those of the grammars augmented for OOV phrases (Plan.untuned_weights)."""
    output:
        weights=WEIGHTS.format(experiment="{experiment}", weights="untuned-{model}"),
    log:
        "logs/{experiment}/write_initial_weights/{model}.log",
    params:
        weights=untuned_weights,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/write_initial_weights.py"


rule decode_shard:
    """One shard of an evaluation set translated to unique n-best lists, with the set's filtered
    grammar or its augmented one (a kH_oov run's weights, or oov_paraphrase.translate;
    Plan.translation_grammar); with lm.rerank_nbest its lists reranked with the reranking LM."""
    input:
        unpack(nbest_reranking_lm),
        evalset=EVALSET_TABLE,
        grammar=translation_grammar,
        lm=decoding_lm,
        weights=WEIGHTS,
    output:
        nbest=temp("results/{experiment}/decode/{weights}/{evalset}/shard{shard}.parquet"),
    log:
        "logs/{experiment}/decode_shard/{weights}/{evalset}/shard{shard}.log",
    benchmark:
        "benchmarks/{experiment}/decode_shard/{weights}/{evalset}/shard{shard}.tsv"
    params:
        settings=decoder_settings(),
        shards=config["decoder"]["shards"],
    threads: 2 if config["decoder"]["shards"] == 1 else 1
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/decode_shard.py"


rule gather_nbest:
    """A set's n-best lists (Parquet and Moses text) and 1-best output (tokenised and
    detokenised) from its shards."""
    input:
        shards=expand(
            "results/{{experiment}}/decode/{{weights}}/{{evalset}}/shard{shard}.parquet",
            shard=range(config["decoder"]["shards"]),
        ),
    output:
        nbest=DECODE_NBEST,
        text=DECODE_NBEST_TEXT,
        onebest=DECODE_ONEBEST,
        detokenized=DECODE_ONEBEST_DETOK,
    log:
        "logs/{experiment}/gather_nbest/{weights}/{evalset}.log",
    params:
        lang=config["preprocess"]["target_lang"],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/gather_nbest.py"


rule untuned_translations:
    """Named target: the tune and test sets decoded with the config's untuned weights."""
    input:
        EFFECTIVE_CONFIG,
        expand(
            DECODE_NBEST.format(experiment=EXPERIMENT, weights="untuned-translation",
                                evalset="{evalset}"),
            evalset=["tune", "test"],
        ),
