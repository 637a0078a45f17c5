"""AWS name rules shared by the components (pure): the rules themselves live in components.naming."""

from __future__ import annotations

from inference_infra.components.naming import is_aws_region as is_region

__all__ = ["is_region"]
