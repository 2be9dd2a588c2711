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
        markdown="results/{experiment}/report/oov_translation.md",
        html=report(
            "results/{experiment}/report/oov_translation.html",
            caption="../report/oov_translation.rst",
            category="OOV paraphrases",
        ),
        csv="results/{experiment}/report/oov_translation.csv",
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
        f"results/{EXPERIMENT}/report/oov_translation.md",
