"""Plotly figures: shared style, then one module per page (run, compare, teach)."""
