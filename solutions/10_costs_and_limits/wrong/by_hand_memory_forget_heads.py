# breaks: test_memory_by_hand
# mistake: scores_forget_heads
# %% cell: memory_by_hand
weight_bytes = {answer:scores_forget_heads}
