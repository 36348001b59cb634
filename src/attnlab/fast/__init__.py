"""``attnlab.fast``: what is tuned for speed, beside the readable reference ``attnlab.nn``.

``attnlab.nn`` is the course's reference -- one forward path per module, the papers' names, what
the lessons, solutions and the grader's sandbox use. This package computes the same model faster
and is what training (:func:`attnlab.training.train`), fast generation and the benchmarks use:

======================  ==========================================================
module                  contents
======================  ==========================================================
``attention``           :class:`FastSelfAttention` (W_Q, W_K, W_V packed once),
                        :func:`fused_attention` (float32 attention under CPU autocast)
``model``               :class:`FastBlock`, :class:`FastGPT` (decode plan for generation)
``convert``             :func:`to_fast`, :func:`to_reference`, ``state_dict`` key maps
``policy``              default precision and torch threads for the machine,
                        re-decided during a run (:class:`ThreadGovernor`)
======================  ==========================================================

Equivalence (fast == reference from the same weights, forward and backward, with masks and KV
caches) is tested in ``tests/nn/test_fast_equivalence.py``.
"""

from .attention import AttentionPlan, FastSelfAttention, fused_attention
from .convert import (
    fast_state_dict,
    has_fast_twin,
    reference_optimizer_state,
    reference_state_dict,
    share_weights,
    to_fast,
    to_reference,
)
from .model import BlockPlan, FastBlock, FastGPT
from .timing import PairedRatio, claim, paired_ratio
from .policy import (
    MachinePolicy,
    ThreadGovernor,
    apply_thread_policy,
    cgroup_cpu_limit,
    cpu_has_native_bf16,
    idle_cpus,
    machine_policy,
    resolve_precision,
    thread_count,
)

__all__ = [
    "fused_attention", "FastSelfAttention", "AttentionPlan",
    "FastBlock", "FastGPT", "BlockPlan",
    "fast_state_dict", "reference_state_dict", "reference_optimizer_state", "has_fast_twin", "to_fast", "to_reference",
    "share_weights",
    "MachinePolicy", "machine_policy", "apply_thread_policy", "ThreadGovernor", "resolve_precision",
    "cpu_has_native_bf16", "cgroup_cpu_limit", "idle_cpus", "thread_count",
    "PairedRatio", "paired_ratio", "claim",
]
