"""What a person reads: DataFrames of a sweep's rows, the printed table, results.md,
the pictures, report.html and the comparison of several sweeps.
"""
