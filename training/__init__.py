"""Accelerate training and evaluation recipes."""
