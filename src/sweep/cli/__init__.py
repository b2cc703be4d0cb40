"""How a command meets its user: every command's ``--help`` and the list of commands,
argparse types that say the range they expect, and how a command ends (one line on
stderr and an exit status).
"""
