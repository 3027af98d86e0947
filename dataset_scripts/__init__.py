"""Corpus readers, voice activity, turn-taking events, 40 ms labels and dataset builders."""
