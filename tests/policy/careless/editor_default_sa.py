"""A project-level roles/editor for the Compute Engine default service account."""

import pulumi_gcp as gcp
from _common import DEFAULT_SA

gcp.projects.IAMMember(
    "editor", project="careless-project", role="roles/editor", member=f"serviceAccount:{DEFAULT_SA}"
)
