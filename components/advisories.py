"""Known advisories of the engines the library pins (components/images.py), and which pin falls in one.

Each row is a published advisory: its id (and aliases), the package, the affected range as the advisory
states it, the publication date, whether a caller needs the API key to exploit it, and where it was read.
`engine_version` says which vLLM each pinned engine image carries (from the image's release notes or
its build string), so `affecting(image)` lists the advisories a pin falls inside.

A stack whose fleet serves a model from a pin inside an advisory is refused (`inference-infra plan`
exits 2) when the fleet is behind an endpoint, unless `ACCEPTED` holds a dated acceptance of that
advisory for that pin (it then warns until the acceptance runs out, and refuses after). An advisory
exploitable without the key is never accepted for a pool behind an endpoint. A fleet on no endpoint is
warned about: no client reaches it (its engine ports admit the endpoint's load balancer only).

Sources read 2026-12-02: the CVE records (github.com/CVEProject/cvelistV5) and OSV entries of each id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from inference_infra.components.catalog.types import AcceleratorFamily
from inference_infra.components.images import VLLM_NEURON, VLLM_OPENAI, VLLM_TPU, PinnedImage

AS_OF = date(2026, 12, 2)


@dataclass(frozen=True, kw_only=True)
class Advisory:
    id: str  # the GitHub advisory id (GHSA-...) or the CVE id
    aliases: tuple[str, ...]
    package: str  # the PyPI package (vllm)
    affected: str  # PEP 440 specifier set of the affected versions, e.g. ">=0.5.5,<0.11.1"
    published: date
    needs_key: bool  # False: exploitable without the API key (an authentication bypass)
    summary: str
    source: str

    def covers(self, version: str) -> bool:
        """Whether the version is affected. A pre-release of the fixing version (0.22.0rc1 against
        `<0.22.0`, which PEP 440 leaves outside) counts as affected: it is not known to carry the fix.
        A version that cannot be read is not known to be outside either."""
        try:
            parsed = Version(version)
        except InvalidVersion:
            return True
        spec = SpecifierSet(self.affected, prereleases=True)
        if parsed in spec:
            return True
        return parsed.is_prerelease and any(
            s.operator == "<" and Version(s.version) == Version(parsed.base_version) for s in spec
        )


ADVISORIES: tuple[Advisory, ...] = (
    Advisory(
        id="GHSA-94f4-hr76-p5j6",
        aliases=("CVE-2026-48746",),
        package="vllm",
        affected="<0.22.0",
        published=date(2026, 6, 22),
        needs_key=False,
        summary="OpenAI API authentication bypass (request smuggling past the API-key middleware); CVSS 9.1",
        source="CVE record CVE-2026-48746 (cvelistV5), references GHSA-94f4-hr76-p5j6 and vllm PR #43426",
    ),
    Advisory(
        id="GHSA-69j4-grxj-j64p",
        aliases=("CVE-2025-62426",),
        package="vllm",
        affected=">=0.5.5,<0.11.1",
        published=date(2025, 11, 20),
        needs_key=True,
        summary="denial of service through chat_template_kwargs on /v1/chat/completions and /tokenize",
        source="OSV GHSA-69j4-grxj-j64p (published 2025-11-20T21:26:24Z); NVD CVE-2025-62426",
    ),
    Advisory(
        id="GHSA-8737-qx52-hjff",
        aliases=("CVE-2026-71486",),
        package="vllm",
        affected="<0.26.0",
        published=date(2026, 8, 17),
        needs_key=True,
        summary="derender endpoints decode caller-supplied token ids without output bounds (CPU, memory)",
        source="OSV CVE-2026-71486 (published 2026-08-17); tenable.com/cve/CVE-2026-71486",
    ),
    Advisory(
        id="CVE-2026-114049",
        aliases=(),
        package="vllm",
        affected="<0.31.0",
        published=date(2026, 10, 21),
        needs_key=True,  # through the load balancer: /invocations (the unauthenticated way) is closed there
        summary="cross-request allowed_token_ids mask leak (InputBatch.condense): one client constrains "
        "another's output; also reachable through the engine's unauthenticated /invocations",
        source="CVE record CVE-2026-114049 (cvelistV5, VulnCheck, published 2026-10-21)",
    ),
    Advisory(
        id="GHSA-542m-9234-8gvf",
        aliases=("CVE-2026-115911", "PYSEC-2026-4344"),
        package="vllm",
        affected=">=0.19.0,<0.32.0",
        published=date(2026, 10, 26),
        needs_key=True,
        summary="denial of service through unbounded chat-template rendering",
        source="OSV CVE-2026-115911 / PYSEC-2026-4344 (published 2026-10-26)",
    ),
    Advisory(
        id="GHSA-x567-49g5-p4cf",
        aliases=("CVE-2026-115918", "PYSEC-2026-4349"),
        package="vllm",
        affected=">=0.16.0,<0.32.0",
        published=date(2026, 10, 26),
        needs_key=True,
        summary="/v1/responses bypasses trust_request_chat_template (CPU or memory exhaustion)",
        source="OSV CVE-2026-115918 / PYSEC-2026-4349 (published 2026-10-26)",
    ),
)

# The vLLM each pinned engine image carries: its tag (vllm-openai), the DLC's tag and release notes
# (Neuron: 0.9.1 on Neuron SDK 2.25), the nightly's build string (TPU: components/images.py).
ENGINE_VERSIONS: dict[str, str] = {
    VLLM_OPENAI.digest: "0.28.0",
    VLLM_NEURON.digest: "0.9.1",
    VLLM_TPU.digest: "0.29.1rc1.dev468",
}


@dataclass(frozen=True, kw_only=True)
class Acceptance:
    """An advisory accepted for one pin, for a while, with the reason: the plan warns until `until`."""

    advisory: str
    image: str  # the pin's digest
    until: date
    reason: str


_NEEDS_KEY_MITIGATION = (
    "needs an authenticated caller: the load balancers forward only the API the key guards "
    "(/v1/..., components/endpoints/routing.py), so only key holders reach it; until the engine pin "
    "moves to vLLM 0.32 or later"
)
ACCEPTED: tuple[Acceptance, ...] = tuple(
    Acceptance(advisory=advisory, image=image.digest, until=date(2027, 1, 15), reason=_NEEDS_KEY_MITIGATION)
    for image in (VLLM_OPENAI, VLLM_TPU)
    for advisory in ("CVE-2026-114049", "GHSA-542m-9234-8gvf", "GHSA-x567-49g5-p4cf")
)


_PINS = {
    AcceleratorFamily.NVIDIA_GPU: VLLM_OPENAI,
    AcceleratorFamily.AWS_NEURON: VLLM_NEURON,
    AcceleratorFamily.GOOGLE_TPU: VLLM_TPU,
}


def engine_pin(family: AcceleratorFamily) -> PinnedImage:
    """The engine image the library runs on an accelerator family (components.serving.engines agrees)."""
    return _PINS[family]


def engine_version(image: PinnedImage) -> str | None:
    return ENGINE_VERSIONS.get(image.digest)


def affecting(image: PinnedImage, advisories: Sequence[Advisory] = ADVISORIES) -> list[Advisory]:
    """The advisories whose affected range holds the vLLM the pin carries (none for a pin not known)."""
    version = engine_version(image)
    if version is None:
        return []
    return [a for a in advisories if a.package == "vllm" and a.covers(version)]


def acceptance(advisory: Advisory, image: PinnedImage, today: date) -> Acceptance | None:
    """The acceptance in force for this advisory and pin today; never one for an advisory that needs no
    key (an authentication bypass is not accepted behind an endpoint)."""
    if not advisory.needs_key:
        return None
    for accepted in ACCEPTED:
        if accepted.advisory == advisory.id and accepted.image == image.digest and today <= accepted.until:
            return accepted
    return None


def describe(advisory: Advisory) -> str:
    aliases = f" / {', '.join(advisory.aliases)}" if advisory.aliases else ""
    return (
        f"{advisory.id}{aliases} ({advisory.package} {advisory.affected}, published "
        f"{advisory.published.isoformat()}: {advisory.summary})"
    )
