# breaks: test_attention_score_bytes
# mistake: bytes_fixed_float32
# %% cell: attention_score_bytes
def attention_score_bytes(B, H, L, dtype_bytes):
    """Bytes."""
    return B * H * L * L * 4
