"""Which parts of a prompt count as code names (files, identifiers) for hybrid retrieval's names list."""

from tempera.core.textsearch import expand, name_terms, term_set


def test_files_and_identifiers_are_names_in_the_indexed_form() -> None:
    prompt = (
        "fix lint errors: cmd/entire/cli/strategy/common.go:1279:10 and `explain_test.go`; the error from "
        "loadSettingsFromFile() is wrapped again in LoadEntireSettings, see reserve_inventory"
    )
    names = name_terms(prompt)
    assert names == ["common_go", "explain_test_go", "loadsettingsfromfile", "loadentiresettings", "reserve_inventory"]
    indexed = term_set(
        expand(
            "Edited cmd/entire/cli/strategy/common.go, explain_test.go and config.go: "
            "loadSettingsFromFile, LoadEntireSettings, reserve_inventory"
        )
    )
    assert set(names) <= indexed  # each name is a token the FTS index holds


def test_plain_words_people_urls_and_versions_are_not_names() -> None:
    assert name_terms("Caroline went hiking in Paris last weekend with Melanie, e.g. on 2.1.33") == []
    assert name_terms("let's review this PR https://github.com/entireio/cli/pull/88") == []
