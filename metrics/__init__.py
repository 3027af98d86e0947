"""Metric functions (plain Python). The evaluate modules in the folders beside this file
are thin typed faces over them."""
