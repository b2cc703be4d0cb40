"""sweep's Hydra plugins: Hydra finds launchers only in the ``hydra_plugins`` namespace."""
