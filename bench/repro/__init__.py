"""One-command reproductions of the five papers' experiments (``python bench/reproduce.py``).

Each paper is a module with ``run(ctx: ReproConfig) -> Report``; ``report.py`` holds what they share
(the markdown report with the paper's numbers beside ours, figures as HTML and PNG, claims).
"""

PAPERS = ("zhang2008", "liu2014", "shalev2010", "elenberg2016", "xiang2014")
