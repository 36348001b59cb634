# breaks: test_merge_by_hand
# mistake: heads_wrong_order
# %% cell: merge_by_hand
merged = {answer:heads_wrong_order}
