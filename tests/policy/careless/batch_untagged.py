"""A Batch compute environment whose instances carry no cost tags (none in computeResources.tags, none
in its launch template) and run on-demand in dev without AutoShutdown."""

import pulumi_aws as aws
from _common import TAGS

template = aws.ec2.LaunchTemplate(
    "batch-lt",
    tags=TAGS,
    metadata_options={"http_tokens": "required"},
    network_interfaces=[{"associate_public_ip_address": "false"}],
)
aws.batch.ComputeEnvironment(
    "batch",
    type="MANAGED",
    tags=TAGS,
    compute_resources={
        "type": "EC2",
        "instance_types": ["g5.xlarge"],
        "min_vcpus": 0,
        "max_vcpus": 8,
        "subnets": ["subnet-0careless"],
        "security_group_ids": ["sg-0careless"],
        "instance_role": "arn:aws:iam::123456789012:instance-profile/batch",
        "launch_template": {"launch_template_id": template.id},
    },
)
