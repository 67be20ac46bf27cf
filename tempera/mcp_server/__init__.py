"""Filled by a later part of the build; see DESIGN.md."""
