from inference_infra.components.cli import run

run()
