# xfail: scan false positive, see report (setting an attribute of the student's own class is flagged as monkeypatching)
# A leftover line setting an attribute of the student's own class after defining it.
# %% patch: mha_forward
# - return out, (weights if need_weights else None)
# + return out, (weights if need_weights else None)
# +
# +
# + MultiHeadAttention.fused = False  # leftover from experimenting
