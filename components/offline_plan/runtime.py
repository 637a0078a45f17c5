"""Run a Pulumi Python program in-process under Pulumi's mock runtime and capture it.

`CaptureMonitor` stands where the engine's resource monitor would: it records
every registration (custom and component) with its inputs in wire form, and it
runs resource transforms the way the engine does (the resource's own, then
each ancestor's, then the stack's), by calling the program's own callback
functions, so what is captured is what a real `pulumi preview` would send to
the provider and to the policy pack.

Each run gets a fresh contextvars context and event loop, so one process can
plan many programs (the tests do) without state leaking between them.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import importlib.abc
import importlib.util
import os
import runpy
import sys
import threading
import traceback
import types
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime import config as pulumi_config
from pulumi.runtime import rpc, settings
from pulumi.runtime._callbacks import _CallbackServicer
from pulumi.runtime.mocks import MockMonitor, MockResourceArgs, MockSettings
from pulumi.runtime.proto import engine_pb2, resource_pb2
from pulumi.runtime.stack import Stack, run_in_stack, wait_for_rpcs
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from inference_infra.components.offline_plan.mocks import MockContext, OfflineMocks
from inference_infra.components.offline_plan.mocks_k8s import HELM_TEMPLATE, KUSTOMIZE, helm_template_options
from inference_infra.components.offline_plan.model import Capture, CapturedResource
from inference_infra.components.offline_plan.remote import inferred_children

ROOT_STACK_TYPE = "pulumi:pulumi:Stack"
_SEVERITY = {
    engine_pb2.DEBUG: "debug",
    engine_pb2.INFO: "info",
    engine_pb2.WARNING: "warning",
    engine_pb2.ERROR: "error",
}


def wire_value(value: struct_pb2.Value | Any) -> Any:
    """A protobuf Value as plain JSON-like Python, integral numbers as int."""
    if isinstance(value, struct_pb2.Struct):
        return {k: wire_value(v) for k, v in value.fields.items()}
    if isinstance(value, struct_pb2.ListValue):
        return [wire_value(v) for v in value.values]
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return wire_value(value.struct_value)
    if kind == "list_value":
        return wire_value(value.list_value)
    if kind == "number_value":
        n = value.number_value
        return int(n) if n.is_integer() else n
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    return None


class CaptureEngine:
    """The engine's log endpoint: keeps what the program logged."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture

    def Log(self, request: Any) -> None:  # noqa: N802 (gRPC method name)
        severity = _SEVERITY.get(request.severity, "info")
        if severity != "debug":  # the SDK's own chatter, several lines per resource
            self.capture.log.append((severity, request.message))


class CaptureMonitor(MockMonitor):
    def __init__(self, mocks: OfflineMocks, capture: Capture) -> None:
        super().__init__(mocks)
        self.capture = capture
        self._lock = threading.Lock()
        self._stack_transforms: list[Any] = []  # callback_pb2.Callback, in registration order
        self._own_transforms: dict[str, list[Any]] = {}
        self._parent_of: dict[str, str] = {}
        self._index: dict[str, int] = {}

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """URNs as the engine builds them: the parent's qualified type, minus the root stack's."""
        qualified = type_
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != ROOT_STACK_TYPE:
                qualified = f"{parent_type}${type_}"
        return f"urn:pulumi:{self.capture.stack}::{self.capture.project}::{qualified}::{name}"

    def RegisterStackTransform(self, request: Any) -> empty_pb2.Empty:  # noqa: N802
        self._stack_transforms.append(request)
        return empty_pb2.Empty()

    def RegisterResource(self, request: Any) -> resource_pb2.RegisterResourceResponse:  # noqa: N802
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == ROOT_STACK_TYPE:
            self._record(CapturedResource(urn, request.type, request.name, None, False, {}))
            return resource_pb2.RegisterResourceResponse(urn=urn)

        _ensure_event_loop()
        with self._lock:
            self._own_transforms[urn] = list(request.transforms)
            self._parent_of[urn] = request.parent
        properties = request.object
        for callback in self._transform_chain(urn):
            properties = self._apply_transform(callback, request, properties)

        if request.remote:
            return self._register_remote(urn, request, properties)
        inputs = rpc.deserialize_properties(properties)
        args = MockResourceArgs(
            typ=request.type,
            name=request.name,
            inputs=inputs,
            provider=request.provider,
            resource_id=request.importId,
            custom=request.custom or False,
        )
        ident, state = self.mocks.new_resource(args)
        for key in request.additionalSecretOutputs:  # e.g. a RandomPassword's result
            if isinstance(state.get(key), str) and len(state[key]) >= 4:
                self.capture.secret_config.add(state[key])
        state_proto = _sync_await(rpc.serialize_properties(state, {}))
        self.resources[urn] = MockMonitor.ResourceRegistration(urn, ident or "", state)
        self._record(
            CapturedResource(
                urn=urn,
                type=request.type,
                name=request.name,
                parent=request.parent or None,
                custom=bool(request.custom),
                wire_props=wire_value(properties),
                id=ident or None,
                provider=request.provider or None,
                protect=bool(request.protect),
                dependencies=tuple(request.dependencies),
            )
        )
        return resource_pb2.RegisterResourceResponse(urn=urn, id=ident or "", object=state_proto)

    def _register_remote(
        self, urn: str, request: Any, properties: struct_pb2.Struct
    ) -> resource_pb2.RegisterResourceResponse:
        """A multi-language component: its provider plugin builds the children, so none are seen.

        It answers with no outputs, which the SDK reads as unknown in a preview, so the
        program carries on the way `pulumi preview` does before the component's children exist.
        """
        self.resources[urn] = MockMonitor.ResourceRegistration(urn, "", {})
        component = CapturedResource(
            urn=urn,
            type=request.type,
            name=request.name,
            parent=request.parent or None,
            custom=False,
            wire_props=wire_value(properties),
            provider=request.provider or None,
            dependencies=tuple(request.dependencies),
            remote=True,
        )
        self._record(component)
        for child in inferred_children(component):
            self._record(child)
        return resource_pb2.RegisterResourceResponse(urn=urn, id="", object=struct_pb2.Struct())

    def ReadResource(self, request: Any) -> resource_pb2.ReadResourceResponse:  # noqa: N802
        """An existing resource read by id (`Resource.get`, a StackReference): not created, so not
        in the plan's resources; noted so the plan can say its state is not known offline."""
        with self._lock:
            self.capture.reads.append((request.type, request.name, request.id))
        return super().ReadResource(request)

    def RegisterResourceOutputs(self, request: Any) -> empty_pb2.Empty:  # noqa: N802
        outputs = wire_value(request.outputs)
        with self._lock:
            if request.urn.split("::")[2] == ROOT_STACK_TYPE:
                self.capture.stack_outputs = outputs
            elif (i := self._index.get(request.urn)) is not None:
                old = self.capture.resources[i]
                self.capture.resources[i] = CapturedResource(**{**old.__dict__, "outputs": outputs})
        return empty_pb2.Empty()

    def _record(self, resource: CapturedResource) -> None:
        with self._lock:
            self._index[resource.urn] = len(self.capture.resources)
            self.capture.resources.append(resource)

    def _transform_chain(self, urn: str) -> Iterator[Any]:
        node: str | None = urn
        while node:
            yield from self._own_transforms.get(node, ())
            node = self._parent_of.get(node)
        yield from list(self._stack_transforms)

    def _apply_transform(
        self, callback: Any, request: Any, properties: struct_pb2.Struct
    ) -> struct_pb2.Struct:
        for servicer in list(_CallbackServicer._servicers):
            fn = servicer._callbacks.get(callback.token)
            if fn is None:
                continue
            transform_request = resource_pb2.TransformRequest(
                type=request.type,
                name=request.name,
                custom=request.custom,
                parent=request.parent,
                properties=properties,
            )
            future = asyncio.run_coroutine_threadsafe(
                fn(transform_request.SerializeToString()), servicer._loop
            )
            response = future.result()
            return response.properties if response.HasField("properties") else properties
        return properties


def _configure(
    capture: Capture, config: Mapping[str, str], secret_keys: list[str], root: Path
) -> CaptureMonitor:
    def on_invoke(token: str, mocked: bool, args: Mapping[str, Any]) -> None:
        capture.invokes.append(token)
        if token == HELM_TEMPLATE:
            capture.helm_templates.append(helm_template_options(args))
        elif token == KUSTOMIZE and isinstance(args.get("directory"), str):
            capture.unfetched.append(f"kustomize directory {args['directory']}")
        if not mocked and token not in capture.unmocked_invokes:
            capture.unmocked_invokes.append(token)

    mocks = OfflineMocks(MockContext.from_config(config), on_invoke=on_invoke)
    monitor = CaptureMonitor(mocks, capture)
    features = set(monitor.GetDeploymentInfo(empty_pb2.Empty()).supportedFeatures)
    settings.configure(
        MockSettings(
            monitor=monitor,
            monitor_features=features,
            engine=CaptureEngine(capture),
            project=capture.project,
            stack=capture.stack,
            dry_run=True,
            organization="organization",
            root_directory=str(root),
            callbacks=None,
            parallel=0,
            outputs=set(),
            lock=threading.Lock(),
            package_refs={},
            base_providers_by_ref={},
            legacy_apply_enabled=False,
        )
    )
    settings.ROOT.set(None)
    pulumi_config.set_all_config(dict(config), secret_keys)
    return monitor


@contextmanager
def _program_environment(program_dir: Path, entry: str) -> Iterator[None]:
    """The process as Pulumi's Python executor sets it up, undone after: the working directory is the
    program's folder (the `main:` folder, or a main file's folder), `sys.argv` is the entry point
    ("." for a folder), and the folder of a `__main__.py` comes first on `sys.path` (runpy's own
    doing). Pulumi v3.259.0 (0ac56e87): pkg/engine/project.go:56-68 and
    sdk/python/cmd/pulumi-language-python-exec:147-149 (`sys.argv = [args.PROGRAM] + args.ARGS`,
    `os.chdir(args.pwd)`)."""
    saved_cwd, saved_path, saved_argv = os.getcwd(), list(sys.path), list(sys.argv)
    saved_env = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("PULUMI_CONFIG")}
    before = set(sys.modules)
    os.chdir(program_dir)
    sys.argv = [entry]
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        sys.argv = saved_argv
        os.environ.update(saved_env)
        prefix = str(program_dir.resolve()) + os.sep
        for name in set(sys.modules) - before:
            module_file = getattr(sys.modules[name], "__file__", None) or ""
            if module_file.startswith(prefix):
                del sys.modules[name]


@functools.cache
def _installed_roots() -> tuple[Path, ...]:
    """Folders of installed code: the interpreter's and the virtualenv's libraries, and this library."""
    import site
    import sysconfig

    folders = {*site.getsitepackages(), site.getusersitepackages()}
    folders |= {sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    library = Path(__file__).resolve().parents[2]  # the inference_infra package (or the checkout)
    return (*(Path(f).resolve() for f in folders if f), library / "components", library / "policy")


def is_program_file(filename: str, program_dir: Path) -> bool:
    """Whether a frame's file is the program's own code: inside its folder (a path test, not a string
    prefix: `infra2/` is not in `infra/`) and not installed code, wherever the virtualenv is
    (Pulumi's default `venv/` sits inside the project folder, so its site-packages does too)."""
    if not os.path.isabs(filename):
        return False  # <frozen runpy>, <string>
    path, folder = Path(filename).resolve(), program_dir.resolve()
    if not path.is_relative_to(folder):
        return False
    if {"site-packages", "dist-packages"} & set(path.relative_to(folder).parts):
        return False
    return not any(
        path.is_relative_to(root) and not folder.is_relative_to(root) for root in _installed_roots()
    )


_K8S_YAML = "pulumi_kubernetes.yaml.yaml"


@contextmanager
def _no_manifest_downloads(capture: Capture) -> Iterator[None]:
    """pulumi-kubernetes' yaml.ConfigFile/ConfigGroup (v1) download a manifest URL in the program's
    process; the offline plan never goes to the network, so the URL yields no objects and is noted.
    The module is patched when the program imports it (a stack without Kubernetes never pays for
    importing the SDK)."""

    def offline(url: str) -> str:
        capture.unfetched.append(url)
        return ""

    patched: list[tuple[Any, Any]] = []

    def patch(module: Any) -> None:
        patched.append((module, module._read_url))
        module._read_url = offline

    class Hook(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
            if name != _K8S_YAML:
                return None
            sys.meta_path.remove(self)  # find the real module, then wrap its loading
            try:
                spec = importlib.util.find_spec(name)
            finally:
                sys.meta_path.insert(0, self)
            if spec is None or spec.loader is None:
                return spec
            load = spec.loader.exec_module

            def exec_module(module: Any) -> None:
                load(module)
                patch(module)

            spec.loader.exec_module = exec_module  # type: ignore[method-assign]
            return spec

    hook = Hook()
    if _K8S_YAML in sys.modules:
        patch(sys.modules[_K8S_YAML])
    else:
        sys.meta_path.insert(0, hook)
    try:
        yield
    finally:
        if hook in sys.meta_path:
            sys.meta_path.remove(hook)
        for module, original in patched:
            module._read_url = original


@contextmanager
def _python_warnings(capture: Capture, program_dir: Path) -> Iterator[None]:
    """Python warnings the program or its SDKs raise (e.g. a provider's deprecation notice) become
    plan warnings naming the program's line, instead of raw text on stderr; one the SDK also logged
    through Pulumi (same text) is shown once."""
    ours: list[tuple[str, str]] = []  # (log entry, warning text)

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, *_: Any) -> None:
        text = str(message)
        if any(text in m for s, m in capture.log if s == "warning"):
            return
        frames = [f for f in traceback.extract_stack() if is_program_file(f.filename, program_dir)]
        where = (
            f"{os.path.relpath(frames[-1].filename, program_dir.parent)}:{frames[-1].lineno}"
            if frames
            else f"{filename}:{lineno}"
        )
        entry = f"{where}: {category.__name__}: {text}"
        ours.append((entry, text))
        capture.log.append(("warning", entry))

    with warnings.catch_warnings():  # Python's own filters decide which warnings show
        warnings.showwarning = show
        yield
    # Pulumi's own log of the same deprecation may arrive after the Python warning: keep ours,
    # which names the program's line.
    entries = {e for e, _ in ours}
    capture.log[:] = [
        (s, m)
        for s, m in capture.log
        if s != "warning" or m in entries or not any(text in m for _, text in ours)
    ]


def _extract_stack_positions(f: Any = None, limit: int | None = None) -> traceback.StackSummary:
    """traceback.extract_stack without reading each frame's source line (file names and line numbers)."""
    if f is None:
        f = sys._getframe().f_back
    stack = traceback.StackSummary.extract(traceback.walk_stack(f), limit=limit, lookup_lines=False)
    stack.reverse()
    return stack


@contextmanager
def _stack_traces_without_source_lines() -> Iterator[None]:
    """The SDK's stack trace of each registration (`pulumi.runtime.resource._get_stack_trace`, sent
    with every RegisterResource) from file names and line numbers alone. `traceback.extract_stack`
    also reads each frame's source line through linecache: on a process's first plan that reads
    every provider module and component file a registration passes through from disk (over a second
    of CPU for the prod stack), for text the request never carries (its StackFrame holds a file URI
    and a line number: pulumi/runtime/resource.py, _get_source_position_for_frame)."""
    from pulumi.runtime import resource as sdk_resource

    sdk_traceback = sdk_resource.traceback
    shim = types.SimpleNamespace(
        extract_stack=_extract_stack_positions,
        format_exc=traceback.format_exc,
        FrameSummary=traceback.FrameSummary,
        StackSummary=traceback.StackSummary,
    )
    sdk_resource.traceback = shim  # type: ignore[assignment]
    try:
        yield
    finally:
        sdk_resource.traceback = sdk_traceback


def run_program(
    program_dir: Path,
    *,
    project: str,
    stack: str,
    config: Mapping[str, str],
    secret_keys: list[str] | None = None,
    root: Path | None = None,
    entry: str = ".",
) -> Capture:
    """Run the program in program_dir (its __main__.py, or the file `entry`) with program_dir as its
    working directory, as `pulumi up` runs it, and capture what it registers.

    Exceptions the program raises propagate to the caller after the runtime is
    shut down, with what was captured so far as their `partial_capture`.
    """
    capture = Capture(project=project, stack=stack, config=dict(config))
    capture.secret_config = {config[k] for k in secret_keys or [] if len(config.get(k) or "") >= 4}
    root = root or program_dir

    def body() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            _record_secrets(capture)
            _configure(capture, config, list(secret_keys or []), root)
            with (
                _program_environment(program_dir, entry),
                _python_warnings(capture, program_dir),
                _no_manifest_downloads(capture),
                _stack_traces_without_source_lines(),
            ):
                target = str(program_dir if entry == "." else program_dir / entry)
                loop.run_until_complete(run_in_stack(lambda: runpy.run_path(target, run_name="__main__")))
        finally:
            loop.close()
            asyncio.set_event_loop(None)

    try:
        contextvars.Context().run(body)
    except Exception as e:
        e.partial_capture = capture  # type: ignore[attr-defined]  # what ran before the failure
        raise
    finally:
        _RECORDER.set(None)
    return capture


_RECORDER: contextvars.ContextVar[Capture | None] = contextvars.ContextVar("secret_recorder", default=None)
_ORIGINAL_SECRET = pulumi.Output.secret


def _secret_recording(val: Any) -> pulumi.Output:
    """`Output.secret` that also notes the plain value, so the plan can scrub it from any text."""
    capture = _RECORDER.get()
    if capture is not None:

        def note(value: Any) -> None:
            if isinstance(value, str) and len(value) >= 4:
                capture.secret_config.add(value)

        if isinstance(val, pulumi.Output):
            val.apply(note)
        else:
            note(val)
    return _ORIGINAL_SECRET(val)


def _record_secrets(capture: Capture) -> None:
    _RECORDER.set(capture)
    if pulumi.Output.secret is not _secret_recording:
        pulumi.Output.secret = staticmethod(_secret_recording)  # type: ignore[method-assign]


class Harness:
    """The same capture for code run by a test: construct components, then call `capture()`.

    Used by the `plan_of` fixture: set up before the test body runs, so the test
    can build components directly, and torn down after it.
    """

    def __init__(
        self,
        *,
        project: str = "inference-infra",
        stack: str = "test",
        config: Mapping[str, str] | None = None,
    ):
        self._capture = Capture(project=project, stack=stack, config=dict(config or {}))
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stack: Stack | None = None

    def start(self) -> Harness:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        _configure(self._capture, self._capture.config, [], Path.cwd())
        self._stack = Stack()
        return self

    def in_loop(self, fn: Callable[[], Any]) -> Any:
        """Call fn inside the harness's running event loop, as program code runs.

        Needed for SDK calls that expect a running loop, such as
        `pulumi.runtime.register_resource_transform`.
        """

        async def call() -> Any:
            return fn()

        return _sync_await(call())

    def capture(self) -> Capture:
        """Wait for every registration so far, then return what was captured."""
        _sync_await(wait_for_rpcs(await_all_outstanding_tasks=True))
        return self._capture

    def stop(self) -> None:
        try:
            if self._loop is not None and not self._loop.is_closed():
                from pulumi.runtime.stack import _shutdown_callbacks

                try:
                    _sync_await(wait_for_rpcs(await_all_outstanding_tasks=True))
                finally:
                    _sync_await(_shutdown_callbacks())
        finally:
            settings.ROOT.set(None)
            settings.SETTINGS.callbacks = None
            pulumi_config.set_all_config({}, [])
            if self._loop is not None:
                self._loop.close()
            asyncio.set_event_loop(None)
