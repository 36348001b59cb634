# breaks: test_mha_forward
# mistake: attn_mask_ignored
# %% patch: mha_forward
# - mask = attn_mask[:, None] if attn_mask.dim() == 3 else attn_mask
# + mask = None
