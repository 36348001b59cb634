# breaks: test_block_forward
# mistake: ffn_reads_block_input
# %% patch: block_forward
# - return h + ffn(norm2(h))
# + return h + ffn(norm2(x))
# - return norm2(h + ffn(h))
# + return norm2(h + ffn(x))
