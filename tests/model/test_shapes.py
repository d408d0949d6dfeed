"""The hot path's TypedDicts (crawler/model/shapes.py) hold the models' fields exactly, so a
shape is never a hand copy that drifts from the model the schema is generated from."""

import inspect
import typing

import pytest

from crawler.model import records, shapes

#: shape -> the model it is the plain data of
MIRRORS = {
    shapes.TemplateFieldData: records.TemplateField,
    shapes.TemplateData: records.Template,
    shapes.SnippetData: records.Snippet,
    shapes.FactsData: records.Facts,
    shapes.LogInfoData: records.LogInfo,
    shapes.ResponseInfoData: records.ResponseInfo,
    shapes.NativeInfoData: records.NativeInfo,
    shapes.SiteData: records.Site,
    shapes.ExceptionData: records.ExceptionInfo,
    shapes.LocationData: records.Location,
    shapes.RepoData: records.RepoRef,
    shapes.ProvenanceData: records.Provenance,
    shapes.RecordData: records.Record,
}

#: extraction's shapes, which no model mirrors (each is checked against a model below)
EXTRACTION = {shapes.ExtractedSite, shapes.FileResult, shapes.ExtractedResponseData}


def _typeddicts():
    return {obj for name, obj in inspect.getmembers(shapes, typing.is_typeddict) if obj.__module__ == shapes.__name__ and not name.startswith("_")}


def _keys(shape):
    return shape.__required_keys__ | shape.__optional_keys__


def test_every_shape_is_checked_against_a_model():
    assert _typeddicts() == set(MIRRORS) | EXTRACTION


@pytest.mark.parametrize("shape", list(MIRRORS), ids=lambda s: s.__name__)
def test_shape_keys_are_the_model_fields(shape):
    model = MIRRORS[shape]
    assert set(_keys(shape)) == set(model.model_fields)
    # every key present: the crawl writes defaults too, so a record reads back to the same bytes
    assert shape.__required_keys__ == frozenset(model.model_fields)


@pytest.mark.parametrize("shape", list(MIRRORS), ids=lambda s: s.__name__)
def test_nested_models_are_typed_by_their_shapes(shape):
    """A field holding a mirrored model (alone, in a list, or nullable) is typed by that model's
    shape: SiteData.template is TemplateData because Site.template is Template."""
    by_model = {model: s for s, model in MIRRORS.items()}
    hints = typing.get_type_hints(shape, localns={"SiteKind": records.SiteKind, "LogLevel": records.LogLevel})
    for name, field in MIRRORS[shape].model_fields.items():
        nested = {a for a in [field.annotation, *_args(field.annotation)] if a in by_model}
        for model in nested:
            assert by_model[model] in {hints[name], *_args(hints[name])}, (shape.__name__, name)


def _args(annotation):
    out = []
    for arg in typing.get_args(annotation):
        out += [arg, *_args(arg)]
    return out


def test_extracted_site_is_a_record_site_less_its_permalink():
    extra = {"title_template", "_derived", "_reads"}  # (what only later stages read: _reads, what its check reads)
    assert set(_keys(shapes.ExtractedSite)) - extra == set(records.Site.model_fields) - {"permalink"}
    # a response as extracted: the record's less the resolved builder, which the site's exception_qualname holds till then
    assert set(_keys(shapes.ExtractedResponseData)) == set(records.ResponseInfo.model_fields) - {"builder_qualname"}


def test_a_built_record_has_exactly_the_shape_keys():
    """What build_entries makes is what RecordData says, at every mirrored level."""
    from crawler.catalogue.entries import Identity, build_entries
    from crawler.extract.visitor import extract_file

    source = b"def f(x):\n    if x < 0:\n        raise ValueError(f'negative: {x}')\n"
    result = extract_file("pkg/mod.py", source)
    identity = Identity(
        repo=records.RepoRef(url="https://github.com/o/r", owner="o", name="r"),
        commit="a" * 40,
        commit_date="2026-01-01T00:00:00+00:00",
        upstream_commit=None,
        source="git",
    )
    (record,) = build_entries(identity, result["sites"]).records
    assert set(record) == set(_keys(shapes.RecordData))
    for key, shape in [
        ("exception", shapes.ExceptionData),
        ("location", shapes.LocationData),
        ("message", shapes.TemplateData),
        ("provenance", shapes.ProvenanceData),
        ("repo", shapes.RepoData),
    ]:
        assert set(record[key]) == set(_keys(shape)), key
    (site,) = record["sites"]
    assert set(site) == set(_keys(shapes.SiteData))
    for key, shape in [("template", shapes.TemplateData), ("snippet", shapes.SnippetData), ("facts", shapes.FactsData)]:
        assert set(site[key]) == set(_keys(shape)), key
    records.Record.model_validate(record)  # and the model takes it
