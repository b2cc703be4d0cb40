"""Running a sweep under Hydra: one job per setting, the checks before the first job,
the prewarm pass, device placement, the launchers, and the report at the end.
"""
