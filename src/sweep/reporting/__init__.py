"""What a person reads: DataFrames of a sweep's rows, the printed table, results.md,
the pictures, report.html and the comparison of several sweeps; and which job of a sweep
folder a command takes (``selection``: a given one or the recommended one).
"""
