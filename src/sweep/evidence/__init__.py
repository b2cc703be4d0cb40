"""The ``sweep.evidence`` command (``python -m sweep.evidence``, in ``__main__``).

Turning real questions into a labelled set: passages of the extracted text and BM25
proposals of the evidence, written as a draft a person confirms, and the questions file
written from the proposals kept.
"""
