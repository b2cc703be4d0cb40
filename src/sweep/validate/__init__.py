"""The ``sweep.validate`` command: ``__main__`` reads the command line, ``validating``
checks a dataset against every rule of its loader and describes it."""
