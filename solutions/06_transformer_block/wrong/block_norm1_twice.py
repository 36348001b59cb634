# breaks: test_block_forward
# %% patch: block_forward
# - return h + ffn(norm2(h))
# + return h + ffn(norm1(h))
# - return norm2(h + ffn(h))
# + return norm1(h + ffn(h))
