# breaks: test_combine_masks
# mistake: combine_drops_masks
# Stops at the first None instead of skipping it: later masks are ignored.
# %% patch: combine_masks
# - continue
# + break
