# breaks: test_attention_score_bytes
# mistake: scores_forget_heads
# %% cell: attention_score_bytes
def attention_score_bytes(B, H, L, dtype_bytes):
    """Bytes."""
    return B * L * L * dtype_bytes
