# breaks: test_scores_by_hand
# mistake: no_scale
# %% cell: scores_by_hand
scores = {answer:no_scale}
