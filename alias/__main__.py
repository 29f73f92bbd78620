from alias.cli import main

main()
