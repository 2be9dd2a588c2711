# The experiment's effective configuration, written beside its results.


rule effective_config:
    """The configuration the experiment runs with: its config files merged and the schema's
    defaults filled in (a complete config file). Rewritten when the configuration changes
    (its hash is a param); no other job reads it, so rewriting it reruns nothing."""
    output:
        config=EFFECTIVE_CONFIG_FILE,
    log:
        "logs/{experiment}/effective_config.log",
    params:
        config_hash=config_hash(config),
    localrule: True
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/write_config.py"
