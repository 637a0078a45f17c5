"""Shared fixtures: the offline plan's capture, for components and whole stacks.

- `plan_of`: build components in the test body, then `plan_of()` (or
  `plan_of(component)`) returns the `Capture` of everything registered so far,
  with inputs exactly as the engine would receive them.
- `tagged`: also registers the standard test cost tags (the stack transform).
- `stack_config`: set the harness's Pulumi config, e.g.
  `@pytest.mark.stack_config({"aws:region": "us-west-2"})`.
- `plan_stack(name)`: the whole reference stack's `PlanResult` (cached).
- `pulumi_project(tmp_path)`: writes a throwaway Pulumi project to plan.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from inference_infra.components.offline_plan import PlanResult, plan
from inference_infra.components.offline_plan.model import Capture
from inference_infra.components.offline_plan.runtime import Harness
from inference_infra.components.tagging import CostTags, register_cost_tags

REPO_ROOT = Path(__file__).resolve().parents[1]
TEST_TAGS = CostTags(
    cost_center="ml-platform", environment="test", owner="ml-team@example.com", auto_shutdown=True
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "stack_config(values): Pulumi config for the plan_of harness")


@pytest.fixture
def harness(request: pytest.FixtureRequest) -> Iterator[Harness]:
    marker = request.node.get_closest_marker("stack_config")
    config = {"aws:region": "us-east-1", "gcp:project": "test-project", "gcp:region": "us-central1"}
    if marker is not None:
        config.update(marker.args[0])
    h = Harness(config=config).start()
    try:
        yield h
    finally:
        h.stop()


@pytest.fixture
def plan_of(harness: Harness) -> Callable[..., Capture]:
    def capture(*_built: object) -> Capture:
        return harness.capture()

    return capture


@pytest.fixture
def tagged(harness: Harness) -> CostTags:
    harness.in_loop(lambda: register_cost_tags(TEST_TAGS))
    return TEST_TAGS


# The reference stacks' plans and captures, made once per test session (per xdist worker): a plan of
# prod takes seconds of CPU, and a dozen test files read it. `plan_stack` returns the shared result;
# `plan`, `capture_stack` and the CLI commands built on them (`plan --stack prod`, `monitoring rules
# --stack prod`) get the same for the reference project with its default policy packs. Read them,
# never change them.
_STACK_PLANS: dict[str, PlanResult] = {}


def _reference_plan(stack: str) -> PlanResult:
    if stack not in _STACK_PLANS:
        _STACK_PLANS[stack] = plan(REPO_ROOT, stack)
    return _STACK_PLANS[stack]


@pytest.fixture(scope="session")
def plan_stack() -> Callable[[str], PlanResult]:
    return _reference_plan


def _is_reference(cwd: object) -> bool:
    try:
        return Path(str(cwd)).resolve() == REPO_ROOT.resolve()
    except OSError:
        return False


@pytest.fixture(scope="session", autouse=True)
def _reference_plans_once() -> Iterator[None]:
    from inference_infra.components import offline_plan

    real_plan, real_capture = offline_plan.plan, offline_plan.capture_stack

    def cached_plan(
        cwd: Path, stack: str, *, policy_pack: object = None, policy_config: object = None
    ) -> PlanResult:
        if _is_reference(cwd) and not policy_pack and not policy_config and "/" not in stack:
            return _reference_plan(stack)
        return real_plan(cwd, stack, policy_pack=policy_pack, policy_config=policy_config)

    def cached_capture(cwd: Path, stack: str) -> Capture:
        """The plan's own capture (its plaintext secrets marked, as `plan` marks them)."""
        if not _is_reference(cwd) or "/" in stack:
            return real_capture(cwd, stack)
        return _reference_plan(stack).capture

    patch = pytest.MonkeyPatch()
    patch.setattr(offline_plan, "plan", cached_plan)
    patch.setattr(offline_plan, "capture_stack", cached_capture)
    yield
    patch.undo()


@pytest.fixture
def pulumi_project(tmp_path: Path) -> Callable[..., Path]:
    """Write Pulumi.yaml, __main__.py and Pulumi.<stack>.yaml files; returns the folder."""

    def write(
        program: str, stacks: dict[str, str] | None = None, name: str = "outside", main: str | None = None
    ) -> Path:
        project = f"name: {name}\nruntime: python\n" + (f"main: {main}\n" if main else "")
        (tmp_path / "Pulumi.yaml").write_text(project)
        program_dir = tmp_path / (main or ".")
        program_dir.mkdir(parents=True, exist_ok=True)
        (program_dir / "__main__.py").write_text(textwrap.dedent(program))
        for stack, text in (stacks or {"dev": "config: {}\n"}).items():
            (tmp_path / f"Pulumi.{stack}.yaml").write_text(textwrap.dedent(text))
        return tmp_path

    return write
