"""Accelerator devices: one row per GPU, Neuron chip or TPU chip.

Figures are the vendor's own, per device:

- Throughput is DENSE. NVIDIA datasheets for Ampere and later quote Tensor Core
  figures "with sparsity" (marked *); those are halved here. Turing (T4) has no
  structured sparsity, so its figures are used as printed.
- ``fp8_tflops`` is None for devices without an FP8 datapath (T4, A10G, A100,
  TPU v4/v5e/v5p; TPU v6e is not advertised with FP8). Neuron chips run a
  configurable FP8 ("cFP8") at the FP16 rate.
- ``memory_gib`` is the vendor's nominal device memory. Vendors print "GB" for
  HBM stacks whose capacity is binary (an "80GB" H100 reports 81920 MiB), so the
  printed number is used as GiB. Exception noted on the row: B200 (EC2 reports
  183359 MiB per GPU; NVIDIA prints 180 GB).
- ``memory_bandwidth_gb_s`` is as printed (decimal GB/s).

``as_of`` is the day the figures were read from the cited page; the datasheets
themselves carry no date.
"""

from datetime import date

from inference_infra.components.catalog.types import Accelerator, AcceleratorFamily

_READ = date(2026, 11, 21)

_NV = AcceleratorFamily.NVIDIA_GPU
_NEURON = AcceleratorFamily.AWS_NEURON
_TPU = AcceleratorFamily.GOOGLE_TPU

_T4 = "https://www.nvidia.com/en-us/data-center/tesla-t4/"
_L4 = "https://www.nvidia.com/en-us/data-center/l4/"
_A10 = "https://www.nvidia.com/en-us/data-center/products/a10-gpu/"
_G5 = "https://aws.amazon.com/ec2/instance-types/g5/"
_L40S = "https://www.nvidia.com/en-us/data-center/l40s/"
_A100 = "https://www.nvidia.com/en-us/data-center/a100/"
_H100 = "https://www.nvidia.com/en-us/data-center/h100/"
_H200 = "https://www.nvidia.com/en-us/data-center/h200/"
_B200 = "https://www.nvidia.com/en-us/data-center/hgx/"
_P6 = "https://aws.amazon.com/ec2/instance-types/p6/"
_INF2 = (
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/inferentia2.html"
)
_TRN1 = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/trainium.html"
_TPU_V4 = "https://cloud.google.com/tpu/docs/v4"
_TPU_V5E = "https://cloud.google.com/tpu/docs/v5e"
_TPU_V5P = "https://cloud.google.com/tpu/docs/v5p"
_TPU_V6E = "https://cloud.google.com/tpu/docs/v6e"

ACCELERATORS: tuple[Accelerator, ...] = (
    # --- NVIDIA ---------------------------------------------------------------------------------
    Accelerator(
        key="t4",
        name="NVIDIA T4 16GB",
        family=_NV,
        memory_gib=16,
        memory_bandwidth_gb_s=320,  # datasheet: "320+ GB/s"
        fp16_tflops=65,  # mixed precision FP16/FP32; Turing has no sparsity
        fp8_tflops=None,
        int8_tops=130,
        gcp_accelerator_type="nvidia-tesla-t4",
        source=_T4,
        as_of=_READ,
    ),
    Accelerator(
        key="l4",
        name="NVIDIA L4 24GB",
        family=_NV,
        memory_gib=24,
        memory_bandwidth_gb_s=300,
        fp16_tflops=121,  # 242* with sparsity
        fp8_tflops=242,  # 485* with sparsity (242.5 dense, rounded down)
        int8_tops=242,  # 485* with sparsity
        gcp_accelerator_type="nvidia-l4",
        source=_L4,
        as_of=_READ,
    ),
    Accelerator(
        # AWS's A10G is a variant of the A10; NVIDIA publishes no separate A10G
        # sheet. Compute is the A10 datasheet's (dense), memory per the G5 page.
        # Some third parties quote lower A10G clocks; unverified, not used.
        key="a10g",
        name="NVIDIA A10G 24GB",
        family=_NV,
        memory_gib=24,
        memory_bandwidth_gb_s=600,
        fp16_tflops=125,  # 250* with sparsity
        fp8_tflops=None,
        int8_tops=250,  # 500* with sparsity
        source=f"{_A10} ; {_G5}",
        as_of=_READ,
    ),
    Accelerator(
        key="l40s",
        name="NVIDIA L40S 48GB",
        family=_NV,
        memory_gib=48,
        memory_bandwidth_gb_s=864,
        fp16_tflops=362,  # 733* with sparsity (362.05 dense)
        fp8_tflops=733,  # 1466* with sparsity
        int8_tops=733,  # 1466* with sparsity
        source=_L40S,
        as_of=_READ,
    ),
    Accelerator(
        key="a100-40gb",
        name="NVIDIA A100 SXM 40GB",
        family=_NV,
        memory_gib=40,
        memory_bandwidth_gb_s=1555,
        fp16_tflops=312,  # 624* with sparsity
        fp8_tflops=None,
        int8_tops=624,  # 1248* with sparsity
        gcp_accelerator_type="nvidia-tesla-a100",
        source=_A100,
        as_of=_READ,
    ),
    Accelerator(
        key="a100-80gb",
        name="NVIDIA A100 SXM 80GB",
        family=_NV,
        memory_gib=80,
        memory_bandwidth_gb_s=2039,
        fp16_tflops=312,
        fp8_tflops=None,
        int8_tops=624,
        gcp_accelerator_type="nvidia-a100-80gb",
        source=_A100,
        as_of=_READ,
    ),
    Accelerator(
        key="h100-80gb",
        name="NVIDIA H100 SXM 80GB",
        family=_NV,
        memory_gib=80,
        memory_bandwidth_gb_s=3350,
        fp16_tflops=989,  # 1979* with sparsity
        fp8_tflops=1979,  # 3958* with sparsity
        int8_tops=1979,  # 3958* with sparsity
        gcp_accelerator_type="nvidia-h100-80gb",
        source=_H100,
        as_of=_READ,
    ),
    Accelerator(
        # The same H100 SXM device; GCP sells it as a separate accelerator type
        # on a3-megagpu (more host networking), so it needs its own row.
        key="h100-mega-80gb",
        name="NVIDIA H100 SXM 80GB (GCP A3 Mega)",
        family=_NV,
        memory_gib=80,
        memory_bandwidth_gb_s=3350,
        fp16_tflops=989,
        fp8_tflops=1979,
        int8_tops=1979,
        gcp_accelerator_type="nvidia-h100-mega-80gb",
        source=_H100,
        as_of=_READ,
    ),
    Accelerator(
        key="h200-141gb",
        name="NVIDIA H200 SXM 141GB",
        family=_NV,
        memory_gib=141,
        memory_bandwidth_gb_s=4800,
        fp16_tflops=989,  # same compute as H100 SXM; 1979* with sparsity
        fp8_tflops=1979,
        int8_tops=1979,
        gcp_accelerator_type="nvidia-h200-141gb",
        source=_H200,
        as_of=_READ,
    ),
    Accelerator(
        # HGX B200 (8 GPUs): FP16/BF16 36 PFLOPS*, FP8 72 PFLOPS*, INT8 72 POPS*,
        # 1.4 TB HBM3e, 64 TB/s -> per GPU dense: 2250 / 4500 / 4500, 8 TB/s.
        # Memory: NVIDIA prints 180 GB per GPU; EC2 reports 183359 MiB (179 GiB).
        key="b200",
        name="NVIDIA B200 180GB",
        family=_NV,
        memory_gib=179,
        memory_bandwidth_gb_s=8000,
        fp16_tflops=2250,
        fp8_tflops=4500,
        int8_tops=4500,
        gcp_accelerator_type="nvidia-b200",
        source=f"{_B200} ; {_P6}",
        as_of=_READ,
    ),
    # --- AWS Neuron (per chip; each chip has 2 NeuronCore-v2) ---------------------------------
    Accelerator(
        key="inferentia2",
        name="AWS Inferentia2",
        family=_NEURON,
        memory_gib=32,
        memory_bandwidth_gb_s=820,  # doc prints 820 GiB/sec on one page, 820 GB/s on another
        fp16_tflops=190,  # "190 FP16/BF16/cFP8/TF32 TFLOPS"
        fp8_tflops=190,
        int8_tops=380,
        cores_per_device=2,
        source=_INF2,
        as_of=_READ,
    ),
    Accelerator(
        # Older Neuron docs (v2.9) print 420 INT8 TOPS; the current page prints 380.
        key="trainium1",
        name="AWS Trainium (Trn1)",
        family=_NEURON,
        memory_gib=32,
        memory_bandwidth_gb_s=820,
        fp16_tflops=190,
        fp8_tflops=190,
        int8_tops=380,
        cores_per_device=2,
        source=_TRN1,
        as_of=_READ,
    ),
    # --- Google TPU (per chip) ----------------------------------------------------------------
    Accelerator(
        key="tpu-v4",
        name="Google Cloud TPU v4",
        family=_TPU,
        memory_gib=32,
        memory_bandwidth_gb_s=1200,
        fp16_tflops=275,  # BF16
        fp8_tflops=None,
        int8_tops=275,
        cores_per_device=2,  # 2 TensorCores per chip (v4-N counts TensorCores)
        source=_TPU_V4,
        as_of=_READ,
    ),
    Accelerator(
        key="tpu-v5e",
        name="Google Cloud TPU v5e",
        family=_TPU,
        memory_gib=16,
        memory_bandwidth_gb_s=819,
        fp16_tflops=197,  # BF16
        fp8_tflops=None,
        int8_tops=394,
        cores_per_device=1,
        source=_TPU_V5E,
        as_of=_READ,
    ),
    Accelerator(
        key="tpu-v5p",
        name="Google Cloud TPU v5p",
        family=_TPU,
        memory_gib=95,
        memory_bandwidth_gb_s=2765,
        fp16_tflops=459,  # BF16
        fp8_tflops=None,
        int8_tops=918,
        cores_per_device=2,  # 2 TensorCores per chip (v5p-N counts TensorCores)
        source=_TPU_V5P,
        as_of=_READ,
    ),
    Accelerator(
        key="tpu-v6e",
        name="Google Cloud TPU v6e (Trillium)",
        family=_TPU,
        memory_gib=32,
        memory_bandwidth_gb_s=1640,
        fp16_tflops=918,  # BF16
        fp8_tflops=None,  # not advertised for v6e
        int8_tops=1836,
        cores_per_device=1,
        source=_TPU_V6E,
        as_of=_READ,
    ),
)
