# breaks: test_attention_score_bytes
# mistake: forget_batch
# attention_score_bytes for one sequence (no factor B).
# %% cell: attention_score_bytes
def attention_score_bytes(B, H, L, dtype_bytes):
    """One sequence's scores."""
    return H * L * L * dtype_bytes
