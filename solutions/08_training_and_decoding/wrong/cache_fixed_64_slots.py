# breaks: test_attend_with_cache
# mistake: kv_cache_drops_oldest
# The cache keeps only its newest 64 positions (a fixed number of slots).
# %% patch: attend_with_cache
# - k_all = k if cache_k is None else torch.cat([cache_k, k], dim=2)  # (B, H, S, d_k)
# + k_all = k if cache_k is None else torch.cat([cache_k, k], dim=2)[:, :, -64:]
# - v_all = v if cache_v is None else torch.cat([cache_v, v], dim=2)  # (B, H, S, d_v)
# + v_all = v if cache_v is None else torch.cat([cache_v, v], dim=2)[:, :, -64:]
