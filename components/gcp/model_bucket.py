"""GcsModelPublishers: only the named publishers may write a Cloud Storage model bucket.

The GCP counterpart of the AWS ModelStore's bucket-policy deny. Cloud Storage bucket IAM only grants, and
project-level roles (Owner, Editor, Storage Admin) write every bucket of the project whatever the
bucket's own policy says; an IAM deny policy is what overrides them. So the component:

- tags the bucket (a project tag key `inference-infra-model-store`, value `publishers-only`, bound to
  the bucket in its location);
- attaches a deny policy to the project refusing object writes (create, update, delete, move, restore)
  on resources carrying that tag to every principal (`principalSet://goog/public:all`) except the
  publishers, the deploying identity included unless it is listed;
- grants each publisher `roles/storage.objectUser` on the bucket.

The serving nodes only read (roles/storage.objectViewer on their own folders, components/gcp/
service_account.py). Making tags and deny policies needs `roles/resourcemanager.tagAdmin`,
`roles/resourcemanager.tagUser` and `roles/iam.denyAdmin` (the latter granted on the organization or
the project) for the deploying identity.
"""

from __future__ import annotations

from urllib.parse import quote

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.gcp.model_bucket_args import (
    DENIED_PERMISSIONS,
    PUBLISHER_ROLE,
    GcsModelPublishersArgs,
    principal_of,
    validate_publishers,
)
from inference_infra.components.validation import input_problems

TAG_KEY = "inference-infra-model-store"
TAG_VALUE = "publishers-only"
EVERYONE = "principalSet://goog/public:all"

__all__ = ["GcsModelPublishers", "GcsModelPublishersArgs", "validate_publishers"]


class GcsModelPublishers(pulumi.ComponentResource):
    """A deny policy on object writes to a model bucket for everyone but its publishers."""

    deny_policy: gcp.iam.DenyPolicy

    def __init__(
        self, name: str, args: GcsModelPublishersArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        region = gcp.config.region or None
        project = args.project or gcp.config.project or None
        problems = input_problems(args, lambda a: validate_publishers(a, location=region))
        if project is None:
            problems.append(
                Problem("project", None, "is required: pass project or set the gcp:project config")
            )
        raise_if_invalid(f"GcsModelPublishers {name!r}", problems)
        super().__init__("inference-infra:gcp:GcsModelPublishers", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        location = args.location or region
        key = gcp.tags.TagKey(
            f"{name}-tag-key",
            parent=f"projects/{project}",
            short_name=TAG_KEY,
            description="inference-infra: model buckets only their publishers may write (IAM deny policy)",
            opts=child,
        )
        value = gcp.tags.TagValue(
            f"{name}-tag-value",
            parent=key.name.apply(lambda n: f"tagKeys/{n}"),
            short_name=TAG_VALUE,
            description=f"Object writes only by the publishers of {args.bucket}",
            opts=child,
        )
        binding = gcp.tags.LocationTagBinding(
            f"{name}-tag-binding",
            parent=f"//storage.googleapis.com/projects/_/buckets/{args.bucket}",
            tag_value=value.name.apply(lambda n: f"tagValues/{n}"),
            location=location,
            opts=child,
        )
        condition = pulumi.Output.all(key.name, value.name).apply(
            lambda ids: f"resource.matchTagId('tagKeys/{ids[0]}', 'tagValues/{ids[1]}')"
        )
        self.deny_policy = gcp.iam.DenyPolicy(
            f"{name}-deny-writes",
            # The attachment point, URL-encoded as the IAM v2 API names it.
            parent=quote(f"cloudresourcemanager.googleapis.com/projects/{project}", safe=""),
            name=f"{name}-model-writes"[:63],
            display_name=f"Only the publishers write {args.bucket}"[:63],
            rules=[
                gcp.iam.DenyPolicyRuleArgs(
                    description=f"Object writes to {args.bucket} by anyone but its listed publishers",
                    deny_rule=gcp.iam.DenyPolicyRuleDenyRuleArgs(
                        denied_principals=[EVERYONE],
                        exception_principals=[principal_of(m) for m in args.publishers],
                        denied_permissions=list(DENIED_PERMISSIONS),
                        denial_condition=gcp.iam.DenyPolicyRuleDenyRuleDenialConditionArgs(
                            title="model-bucket-publishers-only", expression=condition
                        ),
                    ),
                )
            ],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[binding]),
        )
        for i, member in enumerate(args.publishers):
            gcp.storage.BucketIAMMember(
                f"{name}-publisher-{i}", bucket=args.bucket, role=PUBLISHER_ROLE, member=member, opts=child
            )
        self.register_outputs({"deny_policy": self.deny_policy.name, "tag_value": value.name})
