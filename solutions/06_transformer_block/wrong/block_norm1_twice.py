# breaks: test_block_forward
# mistake: one_norm_for_both_sublayers
# %% patch: block_forward
# - return h + ffn(norm2(h))
# + return h + ffn(norm1(h))
# - return norm2(h + ffn(h))
# + return norm1(h + ffn(h))
