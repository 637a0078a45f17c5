"""Files that run on the accelerator nodes (shell scripts and a small Python bridge).

They are embedded into the cloud-init user data by `inference_infra.components.aws.bootstrap`
and checked by the tests (shellcheck, and the bridge's pure functions).
"""
