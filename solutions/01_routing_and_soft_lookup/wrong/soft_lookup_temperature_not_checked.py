# breaks: test_soft_lookup
# mistake: temperature_not_checked
# The scores are divided by the temperature directly (not through apply_temperature), so a temperature
# of 0 or below gives NaN or reversed weights instead of the ValueError the docstring promises.
# %% patch: soft_lookup
# - scores = apply_temperature(scores, temperature)
# + scores = scores / temperature
