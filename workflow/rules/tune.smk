# The reference-sparsity experiments of thesis ch. 4 and 5.3: paraphraser tuning, untargeted
# paraphrases of the single reference, MERT of the MT system per condition and replicate (1H+kT
# with targeted references per hypothesis), test evaluation, the Fig. 4.3 and 5.10 tables. Logic
# in circle.experiments (sets, conditions, mt_tuning, run_evaluation, evaluate),
# circle.paraphrase (untargeted, targeted), circle.tune, circle.pipeline.runs (a run's settings
# and files) and circle.figures (report, paraphraser).


rule select_evalset:
    """The first whole documents of an evaluation set, up to sets.max_segments.<set>."""
    input:
        table=TOKENIZED_TABLE.format(experiment="{experiment}", split="{evalset}"),
    output:
        table=EVALSET_TABLE,
    log:
        "logs/{experiment}/select_evalset/{evalset}.log",
    params:
        max_segments=lambda wildcards: config["sets"]["max_segments"][wildcards.evalset],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/select_evalset.py"


rule reference_texts:
    """The test set's references as plain text, one file per reference stream, tokenised (as
    scored) and detokenised, for scoring the decoder's 1-best with other tools (sacrebleu's
    command: docs/usage.md)."""
    input:
        table=EVALSET_TABLE.format(experiment="{experiment}", evalset="test"),
    output:
        tokenized=[REFERENCE_TEXT.format(experiment="{experiment}", evalset="test", k=k)
                   for k in range(1, reference_count("test") + 1)],
        detokenized=[REFERENCE_TEXT_DETOK.format(experiment="{experiment}", evalset="test", k=k)
                     for k in range(1, reference_count("test") + 1)],
    log:
        "logs/{experiment}/reference_texts.log",
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    params:
        lang=config["preprocess"]["target_lang"],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/reference_texts.py"


rule tune_paraphraser:
    """MERT of the paraphraser on the paraphraser-tuning set (thesis §3.2.3); with
    lm.rerank_nbest its n-best lists reranked with its reranking LM."""
    input:
        unpack(paraphraser_nbest_reranking_lm),
        evalset=EVALSET_TABLE.format(experiment="{experiment}", evalset="paratune"),
        grammar=PARAPHRASE_GRAMMAR,
        lm=paraphraser_decoding_lm,
        weights=WEIGHTS.format(experiment="{experiment}", weights=UNTUNED_PARAPHRASE),
    output:
        weights=WEIGHTS.format(experiment="{experiment}", weights=PARAPHRASER_RUN),
        log=TUNING_LOG.format(experiment="{experiment}", run=PARAPHRASER_RUN),
    log:
        "logs/{experiment}/tune_paraphraser/bias{bias}.log",
    benchmark:
        "benchmarks/{experiment}/tune_paraphraser/bias{bias}.tsv"
    params:
        settings=decoder_settings(),
        tuning=paraphraser_tuning_settings(),
        seed=lambda wildcards: tuning_seed(f"paraphraser-bias{wildcards.bias}"),
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/tune_paraphraser.py"


rule paraphrase_references:
    """The k-best untargeted paraphrases of the tune set's single reference (§4.3.2), or of its
    n-th reference set (``tune.ref<n>``, Fig. 4.10), by the tuned paraphraser on the grammar of
    self-paraphrase bias b (Fig. 5.14 applies the bias to the same paraphraser); with
    lm.rerank_nbest reranked with its reranking LM."""
    input:
        unpack(paraphraser_nbest_reranking_lm),
        evalset=EVALSET_TABLE.format(experiment="{experiment}", evalset="tune"),
        grammar=PARAPHRASE_GRAMMAR,
        lm=paraphraser_decoding_lm,
        weights=paraphraser_weights,
    output:
        nbest=UNTARGETED_PARAPHRASES,
    log:
        "logs/{experiment}/paraphrase_references/bias{bias}{reference}.log",
    benchmark:
        "benchmarks/{experiment}/paraphrase_references/bias{bias}{reference}.tsv"
    params:
        settings=decoder_settings(),
        k=max_paraphrases(),
        reference=lambda wildcards: tagged_reference(wildcards.reference),
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/paraphrase_references.py"


rule tune_translation:
    """MERT of the MT system on the tune set with the references of one condition: in this job
    (resuming from its checkpoint), or with tuning.fan_out from the iteration files of the
    tune_shard and tune_iteration jobs (circle.tune.fanout)."""
    input:
        unpack(fanned_out_tuning_inputs),
    output:
        weights=WEIGHTS.format(experiment="{experiment}", weights=RUN),
        log=TUNING_LOG.format(experiment="{experiment}", run=RUN),
    log:
        f"logs/{{experiment}}/tune_translation/{RUN}.log",
    benchmark:
        f"benchmarks/{{experiment}}/tune_translation/{RUN}.tsv"
    params:
        **tuning_run_params(),
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/tune_translation.py"


rule tune_shard:
    """Shard {shard} of iteration {iteration} of a fanned-out tuning run: its sentences decoded
    with the iteration's weights, the new hypotheses scored against their references (for
    1H+kT, paraphrased towards here). Iteration 1 reads the decode stage's lists at the start
    weights instead of decoding them."""
    input:
        unpack(shard_inputs),
        previous=previous_iterations,
    output:
        shard=temp(f"{TUNING_ITERATIONS}/iteration-{{iteration}}.shard{{shard}}.parquet"),
    log:
        f"logs/{{experiment}}/tune_shard/{RUN}/iteration-{{iteration}}.shard{{shard}}.log",
    benchmark:
        f"benchmarks/{{experiment}}/tune_shard/{RUN}/iteration-{{iteration}}.shard{{shard}}.tsv"
    params:
        **tuning_run_params(),
        shards=config["tuning"]["fan_out"],
    threads: 1
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/tune_shard.py"


checkpoint tune_iteration:
    """Iteration {iteration} of a fanned-out tuning run from its shards: the pool grown, the
    weights optimised (or the run stopped), saved as the iteration's file."""
    input:
        unpack(tuning_inputs),
        previous=previous_iterations,
        shards=lambda wildcards: expand(
            f"{TUNING_ITERATIONS}/iteration-{{iteration}}.shard{{shard}}.parquet",
            **wildcards,
            shard=range(config["tuning"]["fan_out"]),
        ),
    output:
        iteration=TUNING_ITERATION,
    log:
        f"logs/{{experiment}}/tune_iteration/{RUN}/iteration-{{iteration}}.log",
    benchmark:
        f"benchmarks/{{experiment}}/tune_iteration/{RUN}/iteration-{{iteration}}.tsv"
    params:
        **tuning_run_params(),
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/tune_iteration.py"


rule evaluate_runs:
    """BLEU/TER/chrF (sacrebleu, also on detokenised text) of every run and of the untuned
    system on the test set, bootstrap p-values against its
    baseline (1H, or 1H with the same single reference and tuning metric) per replicate; per
    condition, mean and sd over replicates and the approximate randomisation test over all
    replicates against the baseline (Clark et al. 2011). Refuses a run whose returned weights
    scored worse on the tune set than its untuned start. Run sets: the config's conditions
    (``evaluation/``) or the paper figures' (``evaluation/paper/``)."""
    input:
        test=EVALSET_TABLE.format(experiment="{experiment}", evalset="test"),
        nbest=lambda wildcards: [
            DECODE_NBEST.format(experiment=wildcards.experiment, weights=run.name, evalset="test")
            for run in evaluated_runs(wildcards)
        ],
        logs=lambda wildcards: [
            TUNING_LOG.format(experiment=wildcards.experiment, run=run.name)
            for run in evaluated_runs(wildcards)
        ],
        untuned=DECODE_NBEST.format(
            experiment="{experiment}", weights="untuned-translation", evalset="test"
        ),
    output:
        table=EVALUATION_TABLE,
        conditions=EVALUATION_CONDITIONS,
    log:
        "logs/{experiment}/evaluate_runs/{run_set}log",
    params:
        runs=evaluated_runs,
        seeds=lambda wildcards: [tuning_seed(run.name) for run in evaluated_runs(wildcards)],
        samples=config["evaluation"]["bootstrap_samples"],
        shuffles=config["evaluation"]["shuffles"],
        significance_level=config["evaluation"]["significance_level"],
        seed=config["seed"],
        lowercased=config["preprocess"]["lowercase"],
        lang=config["preprocess"]["target_lang"],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/evaluate_runs.py"


rule report_references:
    """The thesis Fig. 4.3 table (Markdown, HTML, CSV; significance marks from the approximate
    randomisation test over replicates) and its plot, BLEU per tuning references; the tune
    score of every tuning run per iteration."""
    input:
        table=EVALUATION_TABLE.format(experiment="{experiment}", run_set=""),
        conditions=EVALUATION_CONDITIONS.format(experiment="{experiment}", run_set=""),
        logs=[
            TUNING_LOG.format(experiment="{experiment}", run=run.name) for run in tuning_runs()
        ],
    output:
        markdown=report_file("fig4_3.md"),
        html=report(
            report_file("fig4_3.html"),
            caption="../report/fig4_3_table.rst",
            category="Reference sparsity",
        ),
        csv=report_file("fig4_3.csv"),
        plot=report(
            report_file("fig4_3.png"),
            caption="../report/fig4_3.rst",
            category="Reference sparsity",
        ),
        curves=report(
            report_file("tuning_curves.png"),
            caption="../report/tuning_curves.rst",
            category="Reference sparsity",
        ),
    log:
        "logs/{experiment}/report_references.log",
    params:
        runs=tuning_runs(),
        thesis_numbers=THESIS_NUMBERS,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_references.py"


rule report_targeted:
    """The thesis Fig. 5.10 table and plot (human, untargeted and targeted references, the
    thesis's numbers beside ours) and sample (hypothesis, reference, targeted paraphrase)
    triples from the targeted cache."""
    input:
        unpack(targeted_paraphraser_inputs),
        table=EVALUATION_TABLE.format(experiment="{experiment}", run_set=""),
        conditions=EVALUATION_CONDITIONS.format(experiment="{experiment}", run_set=""),
    output:
        markdown=report_file("fig5_10.md"),
        html=report(
            report_file("fig5_10.html"),
            caption="../report/fig5_10_table.rst",
            category="Targeted paraphraser",
        ),
        csv=report_file("fig5_10.csv"),
        plot=report(
            report_file("fig5_10.png"),
            caption="../report/fig5_10.rst",
            category="Targeted paraphraser",
        ),
        samples_markdown=report_file("targeted_samples.md"),
        samples_html=report(
            report_file("targeted_samples.html"),
            caption="../report/targeted_samples.rst",
            category="Targeted paraphraser",
        ),
    log:
        "logs/{experiment}/report_targeted.log",
    params:
        thesis_numbers=THESIS_NUMBERS,
        settings=decoder_settings(),
        targeted=targeted_settings,
        samples=10,
        seed=config["seed"],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_targeted.py"


rule report_paraphraser:
    """The tuned paraphraser's tune score per iteration, its weights, its identity rate and 10
    sample paraphrases (§3.2.3)."""
    input:
        log=TUNING_LOG.format(experiment="{experiment}", run=PARAPHRASER_RUN),
        untuned=WEIGHTS.format(experiment="{experiment}", weights=UNTUNED_PARAPHRASE),
        weights=WEIGHTS.format(experiment="{experiment}", weights=PARAPHRASER_RUN),
        nbest=UNTARGETED_PARAPHRASES.format(experiment="{experiment}", bias="{bias}", reference=""),
        evalset=EVALSET_TABLE.format(experiment="{experiment}", evalset="tune"),
    output:
        markdown=report_file("paraphraser-bias{bias}.md"),
        html=report(
            report_file("paraphraser-bias{bias}.html"),
            caption="../report/paraphraser.rst",
            category="Paraphraser",
        ),
    log:
        "logs/{experiment}/report_paraphraser/bias{bias}.log",
    params:
        samples=10,
        seed=config["seed"],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_paraphraser.py"


rule report_single_reference:
    """Which translations make up the tune set's single reference (1H) and how long they are
    against the other references (circle.experiments.single_reference; the choice rule is
    corpus.single_reference, §4.3.1 by default)."""
    input:
        tune=EVALSET_TABLE.format(experiment="{experiment}", evalset="tune"),
    output:
        markdown=report_file("single_reference.md"),
        html=report(
            report_file("single_reference.html"),
            caption="../report/single_reference.rst",
            category="Reference sparsity",
        ),
        csv=report_file("single_reference.csv"),
    log:
        "logs/{experiment}/report_single_reference.log",
    params:
        rule=config["corpus"]["single_reference"],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_single_reference.py"


rule reference_sparsity:
    """Named target: the Fig. 4.3 experiment (every condition and replicate of the config) and
    the page on which translations make up its single reference."""
    input:
        EFFECTIVE_CONFIG,
        report_file("fig4_3.md", EXPERIMENT),
        report_file("single_reference.md", EXPERIMENT),
        [template.format(experiment=EXPERIMENT, evalset="test", k=k)
         for k in range(1, reference_count("test") + 1)
         for template in (REFERENCE_TEXT, REFERENCE_TEXT_DETOK)],
        report_file(f"paraphraser-bias{bias_name(config['tuning']['paraphraser_bias'])}.md",
                    EXPERIMENT),


rule reference_quality:
    """Named target: the quality of every set of extra tuning references of the config's
    conditions (circle.experiments.reference_quality)."""
    input:
        EFFECTIVE_CONFIG,
        report_file("reference_quality.md", EXPERIMENT),


rule report_reference_quality:
    """R, the further human references, the untargeted and targeted paraphrases and the MT
    output of the tune set, each against the held-out human references (circle.
    reference_quality)."""
    input:
        unpack(reference_quality_inputs),
    output:
        table="results/{experiment}/evaluation/reference_quality.parquet",
        markdown=report_file("reference_quality.md"),
        html=report(
            report_file("reference_quality.html"),
            caption="../report/reference_quality.rst",
            category="Reference quality",
        ),
        csv=report_file("reference_quality.csv"),
    log:
        "logs/{experiment}/report_reference_quality.log",
    params:
        replicates=lambda wildcards: list(range(config["tuning"]["replicates"])),
        settings=decoder_settings(),
        targeted=lambda wildcards: targeted_settings(wildcards) if targeted_conditions() else None,
        lowercased=config["preprocess"]["lowercase"],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_reference_quality.py"


rule targeted_tuning:
    """Named target: the Fig. 5.10 experiment (the config's 1H+kT conditions beside kH and
    1H+kP, every replicate) and its sample triples."""
    input:
        EFFECTIVE_CONFIG,
        report_file("fig5_10.md", EXPERIMENT),


rule score_iterations:
    """Tune score and test BLEU/TER of every iteration of one tuning run: the test set decoded
    with each iteration's weights (thesis Fig. 5.4; with lm.rerank_nbest its n-best lists
    reranked with the reranking LM, as in tuning)."""
    input:
        unpack(nbest_reranking_lm),
        log=TUNING_LOG.format(experiment="{experiment}", run=RUN),
        test=EVALSET_TABLE.format(experiment="{experiment}", evalset="test"),
        grammar=run_test_grammar,
        lm=decoding_lm,
    output:
        scores=f"results/{{experiment}}/iterations/{RUN}.parquet",
    log:
        f"logs/{{experiment}}/score_iterations/{RUN}.log",
    benchmark:
        f"benchmarks/{{experiment}}/score_iterations/{RUN}.tsv"
    params:
        settings=decoder_settings(),
        run=run_name,
        lowercased=config["preprocess"]["lowercase"],
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/score_iterations.py"


rule report_curves:
    """The thesis Fig. 5.4 page, table and plot: tune and test BLEU per iteration of 1H+1T
    tuned with the targeted.curves paraphraser (no self-paraphrase bias) at two weights."""
    input:
        scores=[
            f"results/{{experiment}}/iterations/{run.name}.parquet" for run in curve_runs()
        ],
    output:
        markdown=report_file("fig5_4.md"),
        html=report(
            report_file("fig5_4.html"),
            caption="../report/fig5_4_table.rst",
            category="Targeted paraphraser",
        ),
        csv=report_file("fig5_4.csv"),
        plot=report(
            report_file("fig5_4.png"),
            caption="../report/fig5_4.rst",
            category="Targeted paraphraser",
        ),
    log:
        "logs/{experiment}/report_curves.log",
    params:
        runs=curve_runs(),
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_curves.py"


rule fig5_4:
    """Named target: thesis Fig. 5.4, targeted tuning without the self-paraphrase bias at the
    targeted.curves weights, tune and test BLEU per iteration (not part of the default target:
    two more targeted tuning runs)."""
    input:
        EFFECTIVE_CONFIG,
        report_file("fig5_4.md", EXPERIMENT),
