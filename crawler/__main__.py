from crawler.cli import main

main()
