"""An Elastic IP attached to a GPU instance that otherwise asks for no public address."""

import pulumi_aws as aws
from _common import GPU_TAGS, PRIVATE_GPU, TAGS

gpu = aws.ec2.Instance("gpu", instance_type="g5.xlarge", ami="ami-0careless", tags=GPU_TAGS, **PRIVATE_GPU)
aws.ec2.Eip("gpu-ip", instance=gpu.id, domain="vpc", tags=TAGS)
