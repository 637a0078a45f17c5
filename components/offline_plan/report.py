"""The plan's two faces: the JSON object of SPEC.md and a readable table."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from inference_infra.components.catalog import Cloud
from inference_infra.components.offline_plan.model import Capture, CapturedResource, masked, scrub
from inference_infra.components.offline_plan.policy import PolicyReport
from inference_infra.components.pricing import (
    ACCELERATOR,
    HOURS_PER_MONTH,
    CostItem,
    CostReport,
    default_region,
    price_use,
)
from inference_infra.components.resources import k8s


@dataclass
class PlanResult:
    capture: Capture
    cost: CostReport
    policy: PolicyReport

    @property
    def exit_code(self) -> int:
        return 1 if self.policy.gate_failed else 0

    def ordered(self) -> list[CapturedResource]:
        """Resources in tree order (parents first, siblings by name): stable across runs."""
        return [r for r, _ in _tree(self.capture)]

    def notes(self) -> list[str]:
        """What the program said for people to read (`pulumi.log.info`), e.g. the planner's choices."""
        found = [m for s, m in self.capture.log if s == "info"]
        region = default_region(Cloud.AWS, self.capture.config)  # Karpenter pools are priced in it
        found += k8s.notes(self.capture.resources, lambda use: price_use(use, region))
        return [scrub(n, self._secrets()) for n in found]

    def warnings(self) -> list[str]:
        found = [m for s, m in self.capture.log if s == "warning"]
        inferred = {r.parent for r in self.capture.resources if r.inferred}
        found += [
            f"{r.type} {r.name!r} is a multi-language (remote) component: its children are built by "
            "its provider plugin and are not visible offline (not priced, not checked by policy); "
            "its outputs are unknown"
            for r in self.capture.resources
            if r.remote and r.urn not in inferred
        ]
        found += [
            f"{r.type} {r.name!r} is a multi-language (remote) component: the resources it creates "
            f"({', '.join(sorted({c.type for c in self.capture.children(r) if c.inferred}))}) are "
            "inferred from its inputs as its plugin would create them, priced and checked by policy; "
            "its other children, if any, are not visible offline and its outputs are unknown"
            for r in self.capture.resources
            if r.remote and r.urn in inferred
        ]
        found += [
            f"no offline answer for data source {t}; it returned its arguments and a made-up id"
            for t in self.capture.unmocked_invokes
        ]
        found += [
            f"pulumi:pulumi:StackReference {ident!r} reads another stack's outputs at deploy time; "
            "offline they are unknown, so whatever the program builds from them is [unknown]"
            if kind == "pulumi:pulumi:StackReference"
            else f"{kind} {name!r} reads an existing resource (id {ident!r}) at deploy time; offline "
            "only the id and the program's own inputs are known, the rest is made up"
            for kind, name, ident in self.capture.reads
        ]
        remote_urls = [
            f
            for r in self.capture.resources
            if r.type in ("kubernetes:yaml/v2:ConfigFile", "kubernetes:yaml/v2:ConfigGroup")
            for f in [r.wire_props.get("file"), *(r.wire_props.get("files") or [])]
            if isinstance(f, str) and "://" in f
        ]
        found += [
            f"the program applies {source}, which the offline plan does not build (kustomize does not run "
            "offline): its objects are not planned, priced or checked by policy; `pulumi preview` reads them"
            if source.startswith("kustomize directory ")
            else f"the program applies the manifest {source}, which the offline plan does not download (it "
            "never uses the network): its objects are not planned, priced or checked by policy; `pulumi "
            "preview` reads them"
            for source in dict.fromkeys([*self.capture.unfetched, *remote_urls])
        ]
        found += k8s.helm_chart_warnings(self.capture.helm_templates)
        found += [f"not priced: {urn}: {why}" for urn, why in self.cost.unpriced]
        if self.policy.note:
            found.append(f"policy: {self.policy.note}")
        return [scrub(w, self._secrets()) for w in found]

    def _secrets(self) -> set[str]:
        if getattr(self, "_secret_cache", None) is None:
            self._secret_cache = self.capture.secrets()
        return self._secret_cache

    def as_json(self) -> dict[str, Any]:
        return {
            "project": self.capture.project,
            "stack": self.capture.stack,
            "resources": [r.as_json() for r in self.ordered()],
            "cost": self.cost.as_json(),
            "policy": self.policy.as_json(),
            "outputs": masked(self.capture.stack_outputs),
            "notes": self.notes(),
            "warnings": self.warnings(),
        }


def _tree(capture: Capture) -> list[tuple[CapturedResource, int]]:
    children: dict[str | None, list[CapturedResource]] = defaultdict(list)
    for r in capture.resources:
        children[r.parent].append(r)
    out: list[tuple[CapturedResource, int]] = []

    def walk(parent: str | None, depth: int) -> None:
        for r in sorted(children.get(parent, []), key=lambda r: (r.custom, r.name, r.type)):
            out.append((r, depth))
            walk(r.urn, depth + 1)

    walk(None, 0)
    # Resources whose parent was never registered (should not happen) still show up.
    seen = {r.urn for r, _ in out}
    out.extend((r, 0) for r in capture.resources if r.urn not in seen)
    return out


def render_table(result: PlanResult) -> str:
    capture = result.capture
    cost_by_urn = {urn: _merged(items) for urn, items in result.cost.by_urn().items()}
    rows = _tree(capture)
    subtotal: dict[str, float] = defaultdict(float)
    for r, _ in reversed(rows):
        own = cost_by_urn[r.urn][0] if r.urn in cost_by_urn else 0.0
        subtotal[r.urn] += own
        if r.parent:
            subtotal[r.parent] += subtotal[r.urn]

    custom = sum(1 for r in capture.resources if r.custom)
    lines = [
        # One count everywhere (the policy lines count the same resources): cloud resources and
        # component resources together, the stack itself included.
        f"Plan for stack {capture.stack!r} of project {capture.project!r}: {len(capture.resources)} "
        f"resources ({custom} cloud resources, {len(capture.resources) - custom} components; offline, "
        "mock runtime)",
        "",
    ]
    name_w = min(max((len(r.name) + 3 * d for r, d in rows), default=10) + 2, 60)
    type_w = min(max((len(r.type) for r, _ in rows), default=10) + 2, 64)
    lines.append(f"{'RESOURCE':<{name_w}}{'TYPE':<{type_w}}{'USD/HOUR':>10}  BASIS")
    for r, depth in rows:
        label = ("   " * max(depth - 1, 0) + ("└─ " if depth else "") + r.name)[: name_w - 1]
        item = cost_by_urn.get(r.urn)
        if item is not None:
            money, basis = f"{item[0]:,.2f}", item[1]
        elif not r.custom and subtotal[r.urn]:
            money, basis = f"{subtotal[r.urn]:,.2f}", "subtotal"
        elif r.remote:
            money, basis = "", "[unknown] (remote component; children not visible offline)"
        else:
            money, basis = "", ""
        if r.inferred:
            basis = f"(inferred from the component's inputs) {basis}".rstrip()
        lines.append(f"{label:<{name_w}}{r.type[: type_w - 1]:<{type_w}}{money:>10}  {basis}".rstrip())
    lines += ["", *_cost_lines(result.cost)]
    lines.append(_policy_line(result.policy))
    for key, value in sorted(masked(capture.stack_outputs).items()):
        lines.append(f"output: {key} = {_printable(value)}")
    for note in result.notes():
        lines.append(f"note: {note}")
    for w in result.warnings():
        lines.append(f"warning: {w}")
    return "\n".join(lines) + "\n"


def _merged(items: list[CostItem]) -> tuple[float, str]:
    """One row's USD/hour and basis: the accelerator's basis first, other charges after it."""
    items = sorted(items, key=lambda i: i.category != ACCELERATOR)
    head, rest = items[0], items[1:]
    basis = head.basis + "".join(f"; +${i.hourly_usd:,.2f} {i.category}: {i.basis}" for i in rest)
    return sum(i.hourly_usd for i in items), basis


def _cost_lines(cost: CostReport) -> list[str]:
    other: dict[str, float] = defaultdict(float)
    for i in cost.items:
        if i.category != ACCELERATOR:
            other[i.category] += i.hourly_usd
    split = ", ".join(f"{k} ${v:,.2f}" for k, v in sorted(other.items()))
    lines = [
        f"Accelerators:    ${cost.accelerators_hourly_usd:,.2f}/hour, "
        f"${cost.accelerators_hourly_usd * HOURS_PER_MONTH:,.2f}/month",
        f"Everything else: ${cost.other_hourly_usd:,.2f}/hour, "
        f"${cost.other_hourly_usd * HOURS_PER_MONTH:,.2f}/month" + (f" ({split})" if split else ""),
        f"Total:           ${cost.hourly_usd:,.2f}/hour, ${cost.monthly_usd:,.2f}/month "
        f"({HOURS_PER_MONTH} h/month; catalog list prices)",
    ]
    if cost.elastic:
        pools = ", ".join(
            f"{i.urn.rsplit('::', 1)[-1]} {i.range.min_size}..{i.range.max_size}"
            for i in cost.elastic
            if i.range
        )
        lines.append(
            f"Elastic pools:   {len(cost.elastic)} ({pools}); the total above is each at its maximum. "
            f"Range: ${cost.hourly_min:,.2f}/hour at their minimum, ${cost.hourly_expected:,.2f}/hour "
            f"expected (${cost.hourly_expected * HOURS_PER_MONTH:,.2f}/month), ${cost.hourly_max:,.2f}/hour "
            "at their maximum"
        )
    if cost.unpriced:
        names = [urn.rsplit("::", 1)[-1] for urn, _ in cost.unpriced]
        lines.append(
            f"Not in the total: {len(names)} resource(s) not priced ({', '.join(names[:6])}"
            f"{', ...' if len(names) > 6 else ''}); why in the warnings and --json cost.unpriced"
        )
    if cost.unsized:
        lines.append(
            f"Not in the total: {len(cost.unsized)} volume(s) sized by their image (AMI or boot image), "
            "not known offline; set the size to price them"
        )
    pending = [u for u in cost.usage_based if u.quantity is None]
    if pending:
        names = sorted({u.name for u in pending})
        lines.append(
            f"Usage-based, not in the total: {len(pending)} quantities of {len(names)} resource(s) "
            f"({', '.join(names[:6])}{', ...' if len(names) > 6 else ''}); unit prices in --json "
            "cost.usage_based; give quantities with --usage-file"
        )
    return lines


def _printable(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, default=str)


def _policy_line(policy: PolicyReport) -> str:
    if not policy.evaluated:
        return f"Policy: not evaluated ({policy.note or 'no policy pack'})"
    config = f"config {policy.config}" if policy.config else "default config"
    head = f"Policy: pack {policy.pack} ({config}), {policy.policies} policies ran: "
    if not policy.violations:
        head += "no violations"
    else:
        head += f"{len(policy.violations)} violation(s){' - GATE FAILED' if policy.gate_failed else ''}"
    lines = [head]
    for v in policy.violations:
        lines.append(f"  [{v.enforcement}] {v.policy}: {v.message}" + (f" ({v.urn})" if v.urn else ""))
    for u in policy.undetermined:
        lines.append(f"  [undetermined] {u.policy}: {u.message}" + (f" ({u.urn})" if u.urn else ""))
    for n in policy.not_applicable:
        lines.append(f"  [not applicable] {n.policy}: {n.reason}")
    return "\n".join(lines)
