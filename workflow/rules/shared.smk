# An experiment that translates with another experiment's MT system (config mt_system;
# circle.pipeline.shared_system): that system's files copied in, in place of the jobs that would
# build and tune them again.


if PLAN.mt_system:

    rule share_mt_system:
        """The MT system of the experiment config mt_system names, copied in: its corpus and
        sets, translation grammar, LM, untuned decodes and 1H runs (circle.pipeline.
        shared_system.shared_mt_files). Its outputs have no wildcards, so Snakemake prefers it
        to the rules that would make these files; its input is refused, naming the problem, if
        that experiment's MT settings differ from this config's or a file is missing."""
        input:
            shared_mt_sources,
        output:
            [f"{RESULTS.format(experiment=EXPERIMENT)}/{path}" for path in PLAN.shared_mt_files],
        log:
            f"logs/{EXPERIMENT}/share_mt_system.log",
        localrule: True
        conda:
            "../../envs/circle.yaml"
        resources:
            runtime=runtime_minutes,
        script:
            "../scripts/share_mt_system.py"
