"""The internet in two halves on a security group: 0.0.0.0/1 + 128.0.0.0/1, ::/1 + 8000::/1."""

import pulumi_aws as aws
from _common import TAGS

aws.ec2.SecurityGroup(
    "gpu-sg",
    vpc_id="vpc-0careless",
    tags=TAGS,
    ingress=[
        {
            "protocol": "tcp",
            "from_port": 22,
            "to_port": 22,
            "cidr_blocks": ["0.0.0.0/1", "128.0.0.0/1"],
            "ipv6_cidr_blocks": ["::/1", "8000::/1"],
        }
    ],
)
