from tempera.cli import main

main()
