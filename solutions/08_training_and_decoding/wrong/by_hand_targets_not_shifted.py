# breaks: test_targets_by_hand
# mistake: target_no_shift
# %% cell: targets_by_hand
y = {answer:target_no_shift}
