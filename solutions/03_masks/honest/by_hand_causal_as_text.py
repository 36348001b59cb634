# The causal mask typed as text (the printed list of True/False rows), read by the answer parser.
# %% cell: causal_by_hand
causal = "{answer}"
