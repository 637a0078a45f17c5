"""The same shapes written carefully: raises no violation at all."""

import json

import pulumi_aws as aws
import pulumi_gcp as gcp
from _common import GPU_TAGS, LABELS, PRIVATE_GPU, TAGS

group = aws.ec2.SecurityGroup(
    "gpu-sg",
    vpc_id="vpc-0careful",
    tags=TAGS,
    ingress=[{"protocol": "tcp", "from_port": 8000, "to_port": 8000, "cidr_blocks": ["10.0.0.0/16"]}],
)
aws.ec2.Instance(  # one L40S: inside the one-accelerator default outside production
    "gpu",
    instance_type="g6e.2xlarge",
    ami="ami-0careful",
    vpc_security_group_ids=[group.id],
    tags=GPU_TAGS,
    user_data="#!/bin/bash\nHF_TOKEN=$(aws secretsmanager get-secret-value --secret-id hf --query "
    "SecretString)\n",
    **PRIVATE_GPU,
)
bucket = aws.s3.Bucket("weights", tags=TAGS)
aws.s3.BucketPublicAccessBlock(
    "weights-public-access",
    bucket=bucket.id,
    block_public_acls=True,
    block_public_policy=True,
    ignore_public_acls=True,
    restrict_public_buckets=True,
)
role = aws.iam.Role(
    "node",
    tags=TAGS,
    assume_role_policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
            ],
        }
    ),
)
aws.iam.RolePolicy(
    "read-weights",
    role=role.id,
    policy=bucket.arn.apply(
        lambda arn: json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{arn}/*"}],
            }
        )
    ),
)
aws.ssm.Parameter("hf-token", name="/ml/hf-token", type="SecureString", value="placeholder", tags=TAGS)
gcs = gcp.storage.Bucket("gcs-weights", location="US", labels=LABELS, uniform_bucket_level_access=True)
account = gcp.serviceaccount.Account("gpu-sa", account_id="gpu-node-sa")
gcp.storage.BucketIAMMember(
    "node-reads",
    bucket=gcs.name,
    role="roles/storage.objectViewer",
    member=account.email.apply(lambda e: f"serviceAccount:{e}"),
)
gcp.compute.Firewall(
    "vllm-internal",
    network="default",
    source_ranges=["10.40.0.0/20"],
    target_tags=["gpu"],
    allows=[{"protocol": "tcp", "ports": ["8000"]}],
)
gcp.compute.Instance(
    "gce-gpu",
    machine_type="g2-standard-4",
    zone="us-central1-a",
    labels={**LABELS, "auto-shutdown": "false"},
    boot_disk={"initialize_params": {"image": "debian-cloud/debian-12"}},
    network_interfaces=[{"network": "default"}],
    scheduling={"provisioning_model": "SPOT", "preemptible": True, "automatic_restart": False},
    service_account={
        "email": account.email,
        "scopes": ["https://www.googleapis.com/auth/devstorage.read_only"],
    },
)
