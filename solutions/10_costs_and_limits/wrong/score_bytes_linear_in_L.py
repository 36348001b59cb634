# breaks: test_attention_score_bytes
# mistake: scores_linear_in_length
# %% cell: attention_score_bytes
def attention_score_bytes(B, H, L, dtype_bytes):
    """Bytes."""
    return B * H * L * dtype_bytes
