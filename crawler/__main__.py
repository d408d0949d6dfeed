from crawler.cli import run

run()
