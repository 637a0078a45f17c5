"""An Auto Scaling group whose instance type is only in its launch template (referenced by its generated
name), on-demand in dev without AutoShutdown."""

import pulumi_aws as aws
from _common import GPU_TAGS, TAGS

template = aws.ec2.LaunchTemplate(
    "gpu-lt",
    instance_type="g5.xlarge",
    image_id="ami-0careless",
    tags=TAGS,
    metadata_options={"http_tokens": "required"},
    network_interfaces=[{"associate_public_ip_address": "false"}],
    tag_specifications=[{"resource_type": "instance", "tags": GPU_TAGS}],
)
aws.autoscaling.Group(
    "gpus",
    min_size=1,
    max_size=2,
    vpc_zone_identifiers=["subnet-0careless"],
    launch_template={"name": template.name, "version": "$Latest"},
    tags=[{"key": k, "value": v, "propagate_at_launch": True} for k, v in GPU_TAGS.items()],
)
