"""errcat curate check takes the dataset as --data, as every other command that reads one does."""

from __future__ import annotations

import consumer_data as cd


def test_check_takes_data_as_the_other_commands_do(cli, tmp_path):
    """'errcat curate check --data output' was 'no such option' (only a positional OUTPUT_DIR)."""
    dataset = cd.write(tmp_path)
    curated = tmp_path / "curated"
    by_option = cli("curate", "check", "--data", dataset, "--curated", curated)
    assert by_option.exit_code == 0, by_option.output
    assert by_option.stdout == cli("curate", "check", dataset, "--curated", curated).stdout
    assert "coverage 0/" in by_option.stdout
    both = cli("curate", "check", dataset, "--data", dataset)
    assert both.exit_code == 2 and both.stderr.startswith("errcat: give the datasets once")
