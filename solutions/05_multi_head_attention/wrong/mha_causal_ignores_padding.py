# breaks: test_mha_forward
# mistake: combine_drops_masks
# is_causal replaces the other masks instead of being combined with them.
# %% patch: mha_forward
# - mask = causal if mask is None else mask & causal
# + mask = causal
