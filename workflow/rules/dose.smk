# Tuning on references of known quality (circle.experiments.dose_response): conditions 1H+1X_<extra>
# add one fixed extra reference per tune segment to 1H; their test gain over 1H against the extra
# reference's adequacy. Its own named target, not part of the default one.


rule extra_reference:
    """One fixed extra reference per tune segment for 1H+1X_{extra}: the KJV verse (kjv), the
    untuned system's 1-best (mt), or the second human reference degraded on purpose (noise<p>,
    shuffle; seeded by the config seed), tokenised and lowercased like the tune references."""
    input:
        unpack(extra_reference_inputs),
    output:
        table=EXTRA_REFERENCES,
    log:
        "logs/{experiment}/extra_reference/{extra}.log",
    params:
        seed=config["seed"],
        target_lang=config["preprocess"]["target_lang"],
        lowercase=config["preprocess"]["lowercase"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/extra_reference.py"


rule report_dose_response:
    """The dose-response table, page and figure: per condition that adds one reference to 1H
    (2H, 1H+1P, 1H+1X_<extra>), the extra reference's adequacy against the references held
    out from R and H2 (BLEU, chrF, TER, length, LM), its test BLEU over replicates and its gain
    over 1H with the approximate randomisation test over replicates."""
    input:
        unpack(dose_response_inputs),
    output:
        table="results/{experiment}/evaluation/dose_response.parquet",
        markdown=report_file("dose_response.md"),
        html=report(
            report_file("dose_response.html"),
            caption="../report/dose_response_table.rst",
            category="Dose-response",
        ),
        csv=report_file("dose_response.csv"),
        plot=report(
            report_file("dose_response.png"),
            caption="../report/dose_response.rst",
            category="Dose-response",
        ),
    log:
        "logs/{experiment}/report_dose_response.log",
    params:
        extras=PLAN.dose_extras(),
        lowercased=config["preprocess"]["lowercase"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_dose_response.py"


rule dose_response:
    """Named target: tuning on one extra reference of known quality
    (circle.experiments.dose_response), every 1H+1X_<extra> of dose_response.extra with
    tuning.replicates replicates beside 1H, 2H and 1H+1P, evaluated as the run set evaluation/dose/.
    Not part of the default target, which is at its time budget: each extra reference costs
    tuning.replicates more tuning runs and test decodes."""
    input:
        EFFECTIVE_CONFIG,
        report_file("dose_response.md", EXPERIMENT),
