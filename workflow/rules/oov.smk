# The OOV run set (Marton, Callison-Burch & Resnik 2009, Table 4): kH against kH_oov, the MT
# system tuned on the grammars augmented for OOV phrases. Logic in
# circle.experiments.oov_translation and circle.figures.oov_translation.


rule report_oov_translation:
    """The OOV run set's page: test BLEU, TER and chrF of each kH of
    oov_paraphrase.tuning_conditions, its kH_oov and each kH_oov-<variant> with significance and
    tune scores, the stoplist threshold the tune set chooses, the tune and test sets' OOV rates
    before and after the borrowed rules of each variant, and sample test verses."""
    input:
        unpack(oov_report_inputs),
    output:
        markdown=report_file("oov_translation.md"),
        html=report(
            report_file("oov_translation.html"),
            caption="../report/oov_translation.rst",
            category="OOV paraphrases",
        ),
        csv=report_file("oov_translation.csv"),
    log:
        "logs/{experiment}/report_oov_translation.log",
    params:
        variants=PLAN.oov_report_variants(),
        samples=[run.condition.name for run in PLAN.oov_sample_runs()],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_oov_translation.py"


rule oov_translation:
    """Named target: the OOV run set, every kH of oov_paraphrase.tuning_conditions, its kH_oov
    and its kH_oov-<variant> for each of oov_paraphrase.variants, with tuning.replicates
    replicates, evaluated as evaluation/oov/ (each against kH), and its page. Not part of the
    default target."""
    input:
        EFFECTIVE_CONFIG,
        report_file("oov_translation.md", EXPERIMENT),


# Known words masked as OOV (circle.experiments.oov_masking): the OOV augmentation scored
# against the grammar's own translations at several amounts of monolingual text, no tuning.


rule oov_masking_table:
    """Known words of the test split masked as OOV, one at a time: their distributional
    paraphrases in each amount of monolingual text of oov_paraphrase.masking.text_fractions,
    with oov_paraphrase's search settings, and the rules they borrow from the bilingual
    grammar's phrase rules, scored against their own rules."""
    input:
        grammar=BILINGUAL_GRAMMAR,
        test=TOKENIZED_TABLE.replace("{split}", "test"),
        train=TOKENIZED_TABLE.replace("{split}", "train"),
        monolingual=oov_monolingual,
    output:
        table=OOV_MASKING_TABLE,
    log:
        "logs/{experiment}/oov_masking_table.log",
    benchmark:
        "benchmarks/{experiment}/oov_masking_table.tsv"
    params:
        search=PLAN.oov_paraphrase_settings(""),
        masking=masking_params,
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    resources:
        runtime=runtime_minutes,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/oov_masking_table.py"


rule report_oov_masking:
    """The masked words' page: coverage, accuracy@1, precision@1, recall@k and the random-word
    baseline per amount of monolingual text, the reading of precision@1 against it, and sample
    words."""
    input:
        table=OOV_MASKING_TABLE,
    output:
        markdown=report_file("oov_masking.md"),
        html=report(
            report_file("oov_masking.html"),
            caption="../report/oov_masking.rst",
            category="OOV paraphrases",
        ),
        csv=report_file("oov_masking.csv"),
    log:
        "logs/{experiment}/report_oov_masking.log",
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_oov_masking.py"


rule oov_masking:
    """Named target: known words masked as OOV and scored against their own translations at
    several amounts of monolingual text (oov_paraphrase.masking), and its page. Not part of
    the default target."""
    input:
        EFFECTIVE_CONFIG,
        report_file("oov_masking.md", EXPERIMENT),
