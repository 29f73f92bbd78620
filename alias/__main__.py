from alias.cli import main

main(prog_name="alias-cir")
