# Configuring the targeted paraphraser (thesis §5.2.3, Fig. 5.3, 5.6-5.8): the grid sample, the
# targeting sweep, the grid's weights, one paraphrasing job per bias, the choice and its report.
# Logic in circle.paraphrase.grid_search, circle.paraphrase.paraphraser and
# circle.figures.grid_figures.


rule grid_sample:
    """A seeded sample of tune sentences, their single reference and the 1H system's output
    (with lm.rerank_nbest its n-best lists reranked with the reranking LM, as it was tuned)."""
    input:
        unpack(nbest_reranking_lm),
        evalset=EVALSET_TABLE.format(experiment="{experiment}", evalset="tune"),
        grammar=grid_sample_grammar,
        lm=decoding_lm,
        weights=lambda wildcards: WEIGHTS.format(
            experiment=wildcards.experiment,
            weights=f"1H.rep{config['grid_search']['mt_replicate']}",
        ),
    output:
        sample="results/{experiment}/grid/sample.parquet",
    log:
        "logs/{experiment}/grid_sample.log",
    params:
        size=config["grid_search"]["sample"],
        seed=config["seed"],
        settings=decoder_settings(),
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/grid_sample.py"


rule targeting_sweep:
    """Targeted paraphrases of the sample with the grammar of grid_search.sweep_bias for every
    weight of grid_search.sweep (Fig. 5.3, 5.6)."""
    input:
        sample="results/{experiment}/grid/sample.parquet",
        grammar=PARAPHRASE_GRAMMAR,
        lm=paraphraser_decoding_lm,
        weights=paraphraser_weights,
    output:
        nbest="results/{experiment}/grid/sweep/bias{bias}.nbest.parquet",
        distances="results/{experiment}/grid/sweep/bias{bias}.distances.parquet",
    log:
        "logs/{experiment}/targeting_sweep/bias{bias}.log",
    benchmark:
        "benchmarks/{experiment}/targeting_sweep/bias{bias}.tsv"
    params:
        targeting_weights=config["grid_search"]["sweep"],
        settings=grid_decoder_settings(),
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/paraphrase_sample.py"


rule grid_weights:
    """The grid's targeting weights from the sweep, by circle.paraphrase.grid_search.WeightRange."""
    input:
        distances=lambda wildcards: (
            f"results/{wildcards.experiment}/grid/sweep/"
            f"bias{bias_name(config['grid_search']['sweep_bias'])}.distances.parquet"),
    output:
        weights="results/{experiment}/grid/weights.parquet",
    log:
        "logs/{experiment}/grid_weights.log",
    params:
        weight_count=config["grid_search"]["weights"],
        effective_share=config["grid_search"]["effective_share"],
        saturation_share=config["grid_search"]["saturation_share"],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/grid_weights.py"


rule grid_row:
    """Targeted paraphrases of the sample with the grammar of one bias, for every grid weight
    (a row of Fig. 5.8)."""
    input:
        sample="results/{experiment}/grid/sample.parquet",
        grammar=PARAPHRASE_GRAMMAR,
        lm=paraphraser_decoding_lm,
        weights=paraphraser_weights,
        targeting_weights="results/{experiment}/grid/weights.parquet",
    output:
        nbest=GRID_ROW.format(experiment="{experiment}", bias="{bias}", kind="nbest"),
        distances=GRID_ROW.format(experiment="{experiment}", bias="{bias}", kind="distances"),
    log:
        "logs/{experiment}/grid_row/bias{bias}.log",
    benchmark:
        "benchmarks/{experiment}/grid_row/bias{bias}.tsv"
    params:
        settings=grid_decoder_settings(),
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/paraphrase_sample.py"


rule search_grid:
    """Every point's reference move and D; the chosen point (smallest D among points that
    moved) beside the argmin of D."""
    input:
        sweep=rules.grid_weights.input.distances,
        rows=grid_rows("distances"),
    output:
        points="results/{experiment}/grid/points.parquet",
        choice=GRID_CHOICE,
    log:
        "logs/{experiment}/search_grid.log",
    params:
        min_ref_move=config["grid_search"]["min_ref_move"],
        min_mt_move=config["grid_search"]["min_mt_move"],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/search_grid.py"


rule report_grid_search:
    """Fig. 5.3, 5.6, 5.7 and 5.8 (Markdown, HTML, CSV, PNG) with the thesis's numbers beside."""
    input:
        points="results/{experiment}/grid/points.parquet",
        sweep=rules.grid_weights.input.distances,
        weights="results/{experiment}/grid/weights.parquet",
        choice=GRID_CHOICE,
        nbest=grid_rows("nbest"),
    output:
        markdown=report_file("grid_search.md"),
        html=report(
            report_file("grid_search.html"),
            caption="../report/grid_search.rst",
            category="Targeted paraphraser",
        ),
        sweep_csv=report_file("fig5_3.csv"),
        grid_csv=report_file("fig5_8.csv"),
        sweep_plot=report(
            report_file("fig5_3.png"),
            caption="../report/fig5_3.rst",
            category="Targeted paraphraser",
        ),
        grid_plot=report(
            report_file("fig5_8.png"),
            caption="../report/fig5_8.rst",
            category="Targeted paraphraser",
        ),
    log:
        "logs/{experiment}/report_grid_search.log",
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_grid_search.py"


rule grid_search:
    """Named target: the targeted paraphraser's configuration and the figures that show why."""
    input:
        EFFECTIVE_CONFIG,
        GRID_CHOICE.format(experiment=EXPERIMENT),
        report_file("grid_search.md", EXPERIMENT),
