# breaks: test_causal_by_hand
# mistake: causal_excludes_diagonal
# %% cell: causal_by_hand
causal = {answer:causal_excludes_diagonal}
