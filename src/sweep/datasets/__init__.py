"""Reading a dataset: documents (PDF, HTML, Office, Markdown, text) through one reader
per format, questions and their evidence (offsets or quotes located in the extracted
text), BEIR folders, run files of any retriever, and the statistics ``sweep.validate``
prints.
"""
