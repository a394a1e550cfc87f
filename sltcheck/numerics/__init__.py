"""Numerics: mpmath precision and interval modes, verdicts, input validation."""
