# By-hand answers as an annotated assignment, as a string, and through np.array.
# %% cell: scores_by_hand
scores: list = {answer}
# %% cell: weights_by_hand
weights = "{answer}"
# %% cell: output_by_hand
output = np.array({answer})
