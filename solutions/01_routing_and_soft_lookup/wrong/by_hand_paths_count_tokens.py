# breaks: test_paths_by_hand
# mistake: path_counts_tokens
# %% cell: paths_by_hand
paths = {answer:path_counts_tokens}
