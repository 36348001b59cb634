# breaks: test_mha_forward
# mistake: scores_without_head_axis
# The weights averaged over heads (torch's default) instead of per head.
# %% patch: mha_forward
# - return out, (weights if need_weights else None)
# + return out, (weights.mean(dim=1) if need_weights else None)
