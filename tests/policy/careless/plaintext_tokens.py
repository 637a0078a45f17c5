"""A Hugging Face token in user data and in an SSM String parameter."""

import pulumi_aws as aws
from _common import GPU_TAGS, PRIVATE_GPU, TAGS

TOKEN = "hf_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3x"
aws.ec2.Instance(
    "gpu",
    instance_type="g5.xlarge",
    ami="ami-0careless",
    tags=GPU_TAGS,
    user_data=f"#!/bin/bash\nexport HF_TOKEN={TOKEN}\nhuggingface-cli download meta-llama/Llama-3.1-8B\n",
    **PRIVATE_GPU,
)
aws.ssm.Parameter("hf-token", name="/ml/hf-token", type="String", value=TOKEN, tags=TAGS)
