# breaks: test_count_parameters
# mistake: module_type_not_checked
# The counts are right, but a tensor handed in is not refused with the TypeError the docstring promises
# (it fails later with an AttributeError).
# %% patch: count_parameters
# - if not isinstance(module, nn.Module):
# +
# - raise TypeError(f"count_parameters expects an nn.Module, got {type(module).__name__}")
# +
