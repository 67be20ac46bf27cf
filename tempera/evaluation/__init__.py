"""Retrieval evaluation: pure metric functions and a harness over graded fixtures."""
