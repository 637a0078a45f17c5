from components.cli import run

run()
